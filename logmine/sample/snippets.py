"""Small embedded source files in the languages logmine's own code does not cover, so every
language appears in the synthetic logs whatever ``--code-dir`` holds. Written for logmine."""

from __future__ import annotations

SNIPPETS: dict[str, str] = {
    "src/main/java/org/example/orders/OrderService.java": '''package org.example.orders;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

public class OrderService {
    private final OrderRepository repository;
    private final PriceCalculator calculator;

    public OrderService(OrderRepository repository, PriceCalculator calculator) {
        this.repository = repository;
        this.calculator = calculator;
    }

    public Optional<Order> find(String orderId) {
        if (orderId == null || orderId.isBlank()) {
            return Optional.empty();
        }
        return repository.findById(orderId);
    }

    public Order place(String customerId, List<LineItem> items) {
        if (items.isEmpty()) {
            throw new IllegalArgumentException("an order needs at least one item");
        }
        long total = 0;
        for (LineItem item : items) {
            total += calculator.price(item.sku(), item.quantity());
        }
        Order order = new Order(customerId, new ArrayList<>(items), total, "PENDING");
        repository.save(order);
        return order;
    }

    public List<Order> openOrders(String customerId) {
        List<Order> result = new ArrayList<>();
        for (Order order : repository.findByCustomer(customerId)) {
            if (!"SHIPPED".equals(order.status())) {
                result.add(order);
            }
        }
        return result;
    }
}
''',
    "src/main/java/org/example/orders/RetryPolicy.java": '''package org.example.orders;

import java.time.Duration;

public final class RetryPolicy {
    private final int maxAttempts;
    private final Duration baseDelay;

    public RetryPolicy(int maxAttempts, Duration baseDelay) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be positive");
        }
        this.maxAttempts = maxAttempts;
        this.baseDelay = baseDelay;
    }

    public Duration delayFor(int attempt) {
        long factor = 1L << Math.min(attempt, 10);
        return baseDelay.multipliedBy(factor);
    }

    public boolean shouldRetry(int attempt, Exception error) {
        return attempt < maxAttempts && !(error instanceof IllegalStateException);
    }
}
''',
    "web/src/cart.js": '''import { formatPrice } from "./format.js";

const STORAGE_KEY = "cart.v2";

export function loadCart(storage = window.localStorage) {
  const raw = storage.getItem(STORAGE_KEY);
  if (!raw) {
    return { items: [], updatedAt: null };
  }
  try {
    return JSON.parse(raw);
  } catch (err) {
    console.warn("dropping unreadable cart", err);
    return { items: [], updatedAt: null };
  }
}

export function addItem(cart, sku, quantity = 1) {
  const existing = cart.items.find((item) => item.sku === sku);
  if (existing) {
    existing.quantity += quantity;
  } else {
    cart.items.push({ sku, quantity });
  }
  cart.updatedAt = new Date().toISOString();
  return cart;
}

export function cartSummary(cart, prices) {
  const total = cart.items.reduce((sum, item) => sum + prices[item.sku] * item.quantity, 0);
  return `${cart.items.length} items, total ${formatPrice(total, "EUR")}`;
}

export async function syncCart(cart, fetchImpl = fetch) {
  const response = await fetchImpl("/api/cart", {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(cart),
  });
  if (!response.ok) {
    throw new Error(`cart sync failed: ${response.status}`);
  }
  return response.json();
}
''',
    "web/src/api/client.ts": '''export interface User {
  id: string;
  name: string;
  email: string;
  roles: string[];
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

export class ApiClient {
  constructor(private readonly baseUrl: string, private readonly token?: string) {}

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.token) {
      headers["Authorization"] = `Bearer ${this.token}`;
    }
    return headers;
  }

  async getUser(id: string): Promise<Result<User>> {
    const response = await fetch(`${this.baseUrl}/users/${encodeURIComponent(id)}`, {
      headers: this.headers(),
    });
    if (response.status === 404) {
      return { ok: false, error: "not found" };
    }
    if (!response.ok) {
      return { ok: false, error: `HTTP ${response.status}` };
    }
    return { ok: true, value: (await response.json()) as User };
  }

  async listUsers(page = 1, pageSize = 50): Promise<User[]> {
    const query = new URLSearchParams({ page: String(page), page_size: String(pageSize) });
    const response = await fetch(`${this.baseUrl}/users?${query}`, { headers: this.headers() });
    const body = await response.json();
    return body.items.filter((user: User) => user.roles.length > 0);
  }
}
''',
    "cmd/ingestd/worker.go": '''package main

import (
\t"context"
\t"errors"
\t"fmt"
\t"log"
\t"time"
)

type Job struct {
\tID      string
\tPath    string
\tRetries int
}

type Worker struct {
\tjobs    <-chan Job
\tresults chan<- error
\ttimeout time.Duration
}

func NewWorker(jobs <-chan Job, results chan<- error, timeout time.Duration) *Worker {
\treturn &Worker{jobs: jobs, results: results, timeout: timeout}
}

func (w *Worker) Run(ctx context.Context) {
\tfor {
\t\tselect {
\t\tcase <-ctx.Done():
\t\t\treturn
\t\tcase job, ok := <-w.jobs:
\t\t\tif !ok {
\t\t\t\treturn
\t\t\t}
\t\t\tw.results <- w.handle(ctx, job)
\t\t}
\t}
}

func (w *Worker) handle(ctx context.Context, job Job) error {
\tctx, cancel := context.WithTimeout(ctx, w.timeout)
\tdefer cancel()
\tif job.Path == "" {
\t\treturn errors.New("job has no path")
\t}
\tlog.Printf("processing %s (%d retries)", job.ID, job.Retries)
\tif err := process(ctx, job.Path); err != nil {
\t\treturn fmt.Errorf("job %s: %w", job.ID, err)
\t}
\treturn nil
}
''',
    "crates/tokenize/src/lib.rs": '''use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Word(String),
    Number(f64),
    Punct(char),
}

pub struct Vocabulary {
    ids: HashMap<String, u32>,
    next_id: u32,
}

impl Vocabulary {
    pub fn new() -> Self {
        Self { ids: HashMap::new(), next_id: 0 }
    }

    pub fn id(&mut self, word: &str) -> u32 {
        if let Some(id) = self.ids.get(word) {
            return *id;
        }
        let id = self.next_id;
        self.ids.insert(word.to_string(), id);
        self.next_id += 1;
        id
    }
}

pub fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    for piece in text.split_whitespace() {
        if let Ok(value) = piece.parse::<f64>() {
            tokens.push(Token::Number(value));
        } else if piece.chars().all(|c| c.is_ascii_punctuation()) {
            tokens.extend(piece.chars().map(Token::Punct));
        } else {
            tokens.push(Token::Word(piece.to_lowercase()));
        }
    }
    tokens
}
''',
}

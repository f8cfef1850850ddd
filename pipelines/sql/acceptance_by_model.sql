-- Requests, acceptance rate and median time to first token per model.
SELECT coalesce(model, 'unknown') AS model,
       count(*) AS requests,
       avg(CASE WHEN accepted THEN 1.0 WHEN NOT accepted THEN 0.0 END) AS acceptance_rate,
       median(ttft_ms) AS ttft_p50_ms
FROM llm_requests
GROUP BY ALL
ORDER BY requests DESC, model

"""logmine_serving: load template packs safely, render prompts and run the generator."""

__version__ = "0.1.0"

"""The review store (SQLite file or PostgreSQL URL): candidates under anonymous ids, runs,
reviewers, reviews. `review_store.ReviewStore` is the entry point; its parts live beside it."""

"""Answers: a question in words, a sourced answer with figures (docs/answers.md). Three steps,
one module each: understand (understand, decide), compute (compute, reads), compose (compose)."""

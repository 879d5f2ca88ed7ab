"""Receipts: what a run did, typed, and its text for the model; the effect on the data and smells."""

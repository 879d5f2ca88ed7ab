"""The loop: rounds of candidates, each run and judged; fix, afix, verify."""

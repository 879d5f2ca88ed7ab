/** A LoopSummary as the kernel sends it (docs/protocol.md). */
export function summary(overrides: { [key: string]: unknown } = {}): { [key: string]: unknown } {
  return {
    loop_id: 'L1',
    cell_id: 'cell-a',
    status: 'fixed',
    reason: 'KeyError fixed in round 2',
    model: 'builtin',
    original: "df['prise'].sum()\n",
    patched: "df['price'].sum()\n",
    diff:
      "--- original\n+++ patched\n@@ -1 +1 @@\n-df['prise'].sum()\n+df['price'].sum()\n",
    max_rounds: 3,
    tokens: 0,
    cost: 0,
    seconds: 1.5,
    created: '2026-11-22T10:00:00+00:00',
    decision: 'pending',
    rounds: [
      {
        index: 1,
        candidate: "df['prise'].sum()",
        receipt: { kind: 'error', text: "KeyError: 'prise'" },
        tokens: 0,
        cost: 0,
        seconds: 0.5
      },
      {
        index: 2,
        candidate: "df['price'].sum()",
        receipt: { kind: 'ok', text: '6' },
        tokens: 0,
        cost: 0,
        seconds: 0.4
      }
    ],
    ...overrides
  };
}

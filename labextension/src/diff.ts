/**
 * Diff rows for the sidebar, computed from two texts: the cell as it is and what a decision
 * writes into it (`reviewRows`); a unified diff text can be parsed too (`parseUnifiedDiff`).
 *
 * Pure module: no DOM, no JupyterLab imports, unit tested under node.
 */

export type RowKind = 'context' | 'add' | 'del' | 'hunk';

/** One line of a unified diff view. */
export interface IDiffRow {
  kind: RowKind;
  text: string;
  /** 1-based line numbers; null where the side has no line. */
  oldLine: number | null;
  newLine: number | null;
}

/** One row of a side-by-side view: left is the old line, right the new. */
export interface ISideBySideRow {
  kind: 'context' | 'change' | 'hunk';
  left: { line: number; text: string; changed: boolean } | null;
  right: { line: number; text: string; changed: boolean } | null;
}

// Characters a reader cannot see (as jupyter_fixloop/hidden.py): controls (ESC, CR, BS), format
// characters (bidi overrides, zero-width), private use, surrogates, unassigned, separators, spaces
// other than U+0020, and the blank lookalikes. Newline and tab stay.
const HIDDEN =
  /(?![\n\t ])[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}\p{Zl}\p{Zp}\p{Zs}\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/gu;
const NAMED: Record<string, string> = { '\r': '\\r' };

/** `text` with every hidden character written as Python's `ascii()` writes it (`\x1b`, `\u202e`). */
export function visible(text: string): string {
  return text.replace(HIDDEN, ch => {
    const code = ch.codePointAt(0) ?? 0;
    if (NAMED[ch]) {
      return NAMED[ch];
    }
    if (code < 0x100) {
      return '\\x' + code.toString(16).padStart(2, '0');
    }
    return code < 0x10000 ? '\\u' + code.toString(16).padStart(4, '0') : '\\U' + code.toString(16).padStart(8, '0');
  });
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** Parse a unified diff (`difflib.unified_diff` style) into rows. */
export function parseUnifiedDiff(diff: string): IDiffRow[] {
  const rows: IDiffRow[] = [];
  let oldLine = 1;
  let newLine = 1;
  for (const line of diff.split('\n')) {
    if (line.startsWith('---') || line.startsWith('+++')) {
      continue;
    }
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      rows.push({ kind: 'hunk', text: line, oldLine: null, newLine: null });
    } else if (line.startsWith('+')) {
      rows.push({ kind: 'add', text: line.slice(1), oldLine: null, newLine });
      newLine++;
    } else if (line.startsWith('-')) {
      rows.push({ kind: 'del', text: line.slice(1), oldLine, newLine: null });
      oldLine++;
    } else if (line.startsWith(' ')) {
      rows.push({ kind: 'context', text: line.slice(1), oldLine, newLine });
      oldLine++;
      newLine++;
    } else if (line.startsWith('\\')) {
      continue; // "\ No newline at end of file"
    }
  }
  return rows;
}

function splitLines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

/**
 * Line diff of two texts as rows (longest common subsequence, whole text:
 * cells are small). Every line is kept, no hunks.
 */
export function diffLines(original: string, patched: string): IDiffRow[] {
  const a = splitLines(original);
  const b = splitLines(patched);
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: length of the LCS of a[i:] and b[j:]
  const lcs: number[][] = Array.from({ length: n + 1 }, () =>
    new Array<number>(m + 1).fill(0)
  );
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] =
        a[i] === b[j]
          ? lcs[i + 1][j + 1] + 1
          : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const rows: IDiffRow[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      rows.push({ kind: 'context', text: a[i], oldLine: i + 1, newLine: j + 1 });
      i++;
      j++;
    } else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      rows.push({ kind: 'del', text: a[i], oldLine: i + 1, newLine: null });
      i++;
    } else {
      rows.push({ kind: 'add', text: b[j], oldLine: null, newLine: j + 1 });
      j++;
    }
  }
  return rows;
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0];
}

function dropFirstLine(text: string): string {
  const at = text.indexOf('\n');
  return at < 0 ? '' : text.slice(at + 1);
}

/**
 * Rows for what a decision does to a cell: `before` (what the cell holds) against `after` (what the
 * decision writes into it), never a diff text stored with a loop, which a shared notebook can forge.
 * A `%%fixloop` line both hold is left out, so the lines number the cell's code.
 */
export function reviewRows(before: string, after: string): IDiffRow[] {
  const magic = firstLine(before);
  if (magic.startsWith('%%fixloop') && firstLine(after) === magic) {
    return diffLines(dropFirstLine(before), dropFirstLine(after));
  }
  return diffLines(before, after);
}

/** True when the rows hold at least one added or deleted line. */
export function hasChanges(rows: IDiffRow[]): boolean {
  return rows.some(row => row.kind === 'add' || row.kind === 'del');
}

/**
 * Pair unified rows into side-by-side rows: a run of deletions followed by a
 * run of additions is laid out line against line.
 */
export function sideBySide(rows: IDiffRow[]): ISideBySideRow[] {
  const out: ISideBySideRow[] = [];
  let k = 0;
  while (k < rows.length) {
    const row = rows[k];
    if (row.kind === 'hunk') {
      out.push({ kind: 'hunk', left: null, right: null });
      k++;
    } else if (row.kind === 'context') {
      out.push({
        kind: 'context',
        left: { line: row.oldLine ?? 0, text: row.text, changed: false },
        right: { line: row.newLine ?? 0, text: row.text, changed: false }
      });
      k++;
    } else {
      const dels: IDiffRow[] = [];
      const adds: IDiffRow[] = [];
      while (k < rows.length && rows[k].kind === 'del') {
        dels.push(rows[k++]);
      }
      while (k < rows.length && rows[k].kind === 'add') {
        adds.push(rows[k++]);
      }
      for (let p = 0; p < Math.max(dels.length, adds.length); p++) {
        const d = dels[p];
        const a = adds[p];
        out.push({
          kind: 'change',
          left: d ? { line: d.oldLine ?? 0, text: d.text, changed: true } : null,
          right: a ? { line: a.newLine ?? 0, text: a.text, changed: true } : null
        });
      }
    }
  }
  return out;
}

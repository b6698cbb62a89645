// Turns a `memls.recall.search` answer into quick-pick entries. Kept free of the 'vscode'
// module so the shaping (validation, labels, relative paths) is unit-tested under plain node.

import * as path from 'node:path';

/** One hit as the server returns it (lines are 0-based, `path` is absolute). */
export interface RecallHit {
  id: string;
  score: number;
  kind: string;
  path: string;
  start_line: number;
  end_line: number;
  heading: string;
  snippet: string;
}

export interface RecallResponse {
  results: RecallHit[];
  mode: string;
  degraded: boolean;
}

export interface RecallPickItem {
  label: string;
  description: string;
  detail: string;
  hit: RecallHit;
}

export interface RecallSearchArgs {
  query: string;
  mode?: 'hybrid' | 'semantic' | 'text';
  kind?: string;
  limit?: number;
  uri?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonNegativeInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function toHit(value: unknown): RecallHit | undefined {
  if (!isRecord(value) || typeof value.path !== 'string' || value.path === '') {
    return undefined;
  }
  const start = nonNegativeInt(value.start_line) ?? 0;
  const end = nonNegativeInt(value.end_line) ?? start;
  return {
    id: typeof value.id === 'string' || typeof value.id === 'number' ? String(value.id) : '',
    score: typeof value.score === 'number' && Number.isFinite(value.score) ? value.score : 0,
    kind: typeof value.kind === 'string' ? value.kind : '',
    path: value.path,
    start_line: start,
    end_line: Math.max(start, end),
    heading: typeof value.heading === 'string' ? value.heading : '',
    snippet: typeof value.snippet === 'string' ? value.snippet : '',
  };
}

/** Validates the server's answer; malformed hits are dropped rather than crashing the pick. */
export function parseRecallResponse(value: unknown): RecallResponse {
  if (!isRecord(value)) {
    return { results: [], mode: 'unknown', degraded: false };
  }
  const results = Array.isArray(value.results)
    ? value.results.map(toHit).filter((h): h is RecallHit => h !== undefined)
    : [];
  return {
    results,
    mode: typeof value.mode === 'string' ? value.mode : 'unknown',
    degraded: value.degraded === true,
  };
}

/** Shows a path relative to the workspace folder holding it, else as it is. */
export function displayPath(file: string, workspaceFolders: readonly string[], platform?: string): string {
  const p = platform === 'win32' ? path.win32 : path.posix;
  for (const folder of workspaceFolders) {
    const rel = p.relative(folder, file);
    if (rel !== '' && !rel.startsWith('..') && !p.isAbsolute(rel)) {
      return rel.split(p.sep).join('/');
    }
  }
  return file;
}

const SNIPPET_MAX = 200;

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > SNIPPET_MAX ? `${flat.slice(0, SNIPPET_MAX - 1)}…` : flat;
}

/** Quick-pick entries in the server's rank order: heading (or file name) as the label,
 * kind, location (1-based line for people) and score as the description, snippet as detail. */
export function toPickItems(
  response: RecallResponse,
  workspaceFolders: readonly string[],
  platform?: string,
): RecallPickItem[] {
  const p = platform === 'win32' ? path.win32 : path.posix;
  return response.results.map((hit) => {
    const where = `${displayPath(hit.path, workspaceFolders, platform)}:${hit.start_line + 1}`;
    const parts = [hit.kind, where, hit.score.toFixed(3)].filter((s) => s !== '');
    return {
      label: hit.heading.trim() !== '' ? hit.heading.trim() : p.basename(hit.path),
      description: parts.join(' · '),
      detail: oneLine(hit.snippet),
      hit,
    };
  });
}

/** Title of the pick, saying plainly when recall ran without semantic search. */
export function pickTitle(response: RecallResponse, query: string): string {
  const mode = response.degraded ? `${response.mode}, degraded: text search only` : response.mode;
  return `memls recall "${query}" — ${response.results.length} result(s) (${mode})`;
}

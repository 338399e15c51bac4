import { expect } from 'vitest';
import { call, type TestServer } from './server';

/** A fresh website of the key's organization (a random url), so tests don't see each other's catalogue. */
export async function newSite(s: TestServer, key: string, name = 'Site', url = `https://${Math.random().toString(36).slice(2)}.example.com`) {
  const r = await call(s, 'POST', '/api/v1/websites', { key, body: { name, url } });
  expect(r.status).toBe(201);
  return r.body.website.id as string;
}

/** POSTs what a test needs made and expects 201 (naming the path and the answer otherwise): the answer's body. */
export async function postCreated(s: TestServer, key: string, path: string, body: unknown) {
  const r = await call(s, 'POST', path, { key, body });
  expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(201);
  return r.body;
}

/** GETs what a test reads and expects 200 (naming the path and the answer otherwise): the answer's body. */
export async function getOk(s: TestServer, key: string, path: string, query: Record<string, string | number> = {}) {
  const r = await call(s, 'GET', path, { key, query });
  expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
}

export interface Refusal {
  method: string;
  path: string;
  /** the key it is sent with, when not the one the cases share */
  key?: string;
  query?: Record<string, string>;
  body?: unknown;
  status: number;
  /** the exact message, or a pattern of it */
  error?: string | RegExp;
}

/**
 * What every catalogue name refuses (a label of 1 to 200 characters): POST `path` with `base` (the other fields valid)
 * and the name missing, empty, blank, 201 characters long, or not a string.
 */
export const badNames = (path: string, base: Record<string, unknown>): Refusal[] => [
  { method: 'POST', path, body: { ...base, name: undefined }, status: 400, error: 'name is required' },
  { method: 'POST', path, body: { ...base, name: '' }, status: 400, error: 'name: must not be empty' },
  { method: 'POST', path, body: { ...base, name: '   ' }, status: 400, error: 'name: must not be empty' },
  { method: 'POST', path, body: { ...base, name: 'n'.repeat(201) }, status: 400, error: 'name: must be at most 200 characters' },
  { method: 'POST', path, body: { ...base, name: ['x'] }, status: 400, error: 'name: must be a string' },
];

/** Each case, sent with `key`: that status with an {error} (exactly `error`, or matching it, when given) and nothing written. */
export async function refusedWithoutWrite(s: TestServer, key: string, cases: Refusal[]) {
  for (const c of cases) {
    const before = await s.head();
    const r = await call(s, c.method, c.path, { key: c.key ?? key, query: c.query, body: c.body });
    const sent = String(JSON.stringify(c.body ?? c.query)).slice(0, 300);
    expect(r.status, `${c.method} ${c.path} ${sent} -> ${JSON.stringify(r.body)}`).toBe(c.status);
    expect(typeof r.body?.error).toBe('string');
    if (typeof c.error === 'string') expect(r.body.error, sent).toBe(c.error);
    else if (c.error) expect(r.body.error, sent).toMatch(c.error);
    expect(await s.head()).toBe(before);
  }
}

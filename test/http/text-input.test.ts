import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_PERCENT_UTF8 } from '../../src/domain/raw-input';
import { TEXT_LONE_SURROGATE, TEXT_NUL } from '../../src/domain/schemas';
import { allTools, restRoutes } from '../../src/areas';
import type { RouteDef } from '../../src/http/route';
import { fieldName, inputsFor, type StringField, stringFields, validInput } from '../support/input-walk';
import { call, startServer, type TestServer } from '../support/server';
import { post } from '../mcp/support';

/*
 * Every string every route and tool accepts, driven from the route table and the tool list (a new route or tool is
 * walked without a line here): a NUL and a lone surrogate in one field, every other field valid, give 400 naming that
 * field, and nothing is written.
 *
 * What reaches the app: a JSON body or tool arguments carry both as JSON escapes (\u0000, \ud800), which JSON.parse
 * turns into exactly those code units. A path or query string carries percent-encoded UTF-8: %00 arrives as NUL; a
 * lone surrogate has no UTF-8 form, so the nearest a client can send is its CESU bytes %ED%A0%80, which are not
 * UTF-8 and are refused as such, naming the parameter (never passed on undecoded, never turned into U+FFFD).
 */

let s: TestServer;
let key: string;
beforeAll(async () => {
  // hundreds of refused requests from one organization: a budget that does not get in the way
  s = await startServer({ RATE_LIMIT_PER_MIN: '1000000' });
  key = (await s.org('Walker')).key;
});
afterAll(async () => s?.close());

const JSON_VALUES = [
  { what: 'NUL', value: 'a\u0000b', message: TEXT_NUL },
  { what: 'a lone high surrogate', value: 'a\ud800b', message: TEXT_LONE_SURROGATE },
  { what: 'a lone low surrogate', value: '\udc00', message: TEXT_LONE_SURROGATE },
];
const URL_VALUES = [
  { what: 'NUL', raw: 'a%00b', message: TEXT_NUL, decodes: true },
  { what: 'a lone surrogate', raw: 'a%ED%A0%80b', message: NOT_PERCENT_UTF8, decodes: false },
];

/** Stands for the raw value while a request is built; replaced by its percent-encoded bytes in the URL. */
const MARK = 'QQMARKQQ';

type Part = 'params' | 'query' | 'body';
const PARTS: Part[] = ['params', 'query', 'body'];

function urlOf(r: RouteDef<any, any, any>, params: Record<string, unknown>, query: Record<string, unknown>, raw: string): string {
  const enc = (v: unknown) => encodeURIComponent(Array.isArray(v) ? v.map(String).join(',') : String(v)).replace(MARK, raw);
  const path = r.url.replace(/:(\w+)/g, (_, n: string) => enc(params[n]));
  const qs = Object.entries(query)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${enc(v)}`)
    .join('&');
  return qs ? `${path}?${qs}` : path;
}

async function send(r: RouteDef<any, any, any>, parts: Record<Part, unknown>, raw = '') {
  const res = await fetch(
    new URL(urlOf(r, (parts.params ?? {}) as Record<string, unknown>, (parts.query ?? {}) as Record<string, unknown>, raw), s.url),
    {
      method: r.method,
      headers: { 'x-api-key': key, ...(parts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: parts.body !== undefined ? JSON.stringify(parts.body) : undefined,
    },
  );
  return { status: res.status, body: (await res.json()) as { error?: string } };
}

/** The message for `field`: exactly the text check's where a valid value passes there, else at least its name. */
function expectNamed(error: string | undefined, name: string, message: string, exact: boolean, what: string) {
  if (exact) expect(error, what).toBe(`${name}: ${message}`);
  else expect(error, what).toMatch(new RegExp(`^${name.replace(/[[\].]/g, '\\$&')}[:\\[. ]`));
}

describe('REST: every string field of every route refuses NUL and lone surrogates', () => {
  it('walks every route of the table', () => {
    expect(restRoutes.length).toBeGreaterThan(40);
    expect(restRoutes.flatMap((r) => PARTS.flatMap((p) => (r[p] ? stringFields(r[p]) : []))).length).toBeGreaterThan(200);
  });

  for (const r of restRoutes) {
    const fields = PARTS.flatMap((part) => (r[part] ? stringFields(r[part]).map((f) => ({ part, f })) : []));
    if (!fields.length) continue;
    it(`${r.method} ${r.url}: ${fields.length} string fields, 400 naming each, nothing written`, async () => {
      const valid = Object.fromEntries(PARTS.map((p) => [p, r[p] ? validInput(r[p]) : undefined])) as Record<Part, unknown>;
      const before = await s.head();
      for (const { part, f } of fields) {
        const build = inputsFor(r[part]!);
        const name = fieldName(f.path);
        if (part === 'body') {
          for (const v of JSON_VALUES) {
            const { input, textChecked } = build(f, v.value);
            const res = await send(r, { ...valid, body: input });
            const what = `${r.method} ${r.url} body ${name} with ${v.what}: ${JSON.stringify(res.body)}`;
            expect(res.status, what).toBe(400);
            expectNamed(res.body.error, name, v.message, textChecked, what);
          }
        } else {
          for (const v of URL_VALUES) {
            const { input, textChecked } = build(f, MARK);
            const res = await send(r, { ...valid, [part]: input }, v.raw);
            const what = `${r.method} ${r.url} ${part} ${name} with ${v.what}: ${JSON.stringify(res.body)}`;
            expect(res.status, what).toBe(400);
            // undecodable bytes are refused before parsing, naming the parameter as the URL carries it
            if (v.decodes) expectNamed(res.body.error, name, v.message, textChecked, what);
            else expect(res.body.error, what).toBe(`${String(f.path[0])}: ${v.message}`);
          }
        }
      }
      expect(await s.head()).toBe(before);
    });
  }

  it('given entity_type=%00 or change_type=%00 on the activity feed, then 400 naming it (was a 500)', async () => {
    for (const field of ['entity_type', 'change_type']) {
      const r = await call(s, 'GET', `/api/v1/activity?${field}=%00`, { key });
      expect(r).toMatchObject({ status: 400, body: { error: `${field}: ${TEXT_NUL}` } });
    }
  });
});

describe('MCP: every string argument of every tool refuses NUL and lone surrogates', () => {
  const callTool = async (name: string, args: unknown, withKey: boolean) => {
    const r = await post(s, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }, withKey ? { 'x-api-key': key } : {});
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.result as { isError?: boolean; structuredContent?: { error: string; status: number } };
  };

  for (const t of allTools) {
    const fields: StringField[] = stringFields(t.input);
    if (!fields.length) continue;
    // public tools are walked without a key: the anonymous path validates the same way
    it(`${t.name}${t.public ? ' (anonymous)' : ''}: ${fields.length} string arguments, 400 naming each, nothing written`, async () => {
      const build = inputsFor(t.input);
      const before = await s.head();
      for (const f of fields) {
        const name = fieldName(f.path);
        for (const v of JSON_VALUES) {
          const { input, textChecked } = build(f, v.value);
          const out = await callTool(t.name, input, !t.public);
          const what = `${t.name} ${name} with ${v.what}: ${JSON.stringify(out)}`;
          expect(out.isError, what).toBe(true);
          expect(out.structuredContent?.status, what).toBe(400);
          expectNamed(out.structuredContent?.error, name, v.message, textChecked, what);
        }
      }
      expect(await s.head()).toBe(before);
    });
  }
});

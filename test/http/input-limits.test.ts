import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/domain/raw-input';
import { LABEL_BIDI, LABEL_CONTROL } from '../../src/domain/schemas';
import { MCP } from '../mcp/support';
import { call, type TestServer, useServer, sharedServer } from '../support/server';

/*
 * CONTRACT.md, "Text and structure limits": a body is valid UTF-8 and nested at most 32 levels (refused on its bytes,
 * before anything recursive sees it: REST, MCP with a key and anonymous MCP alike); names and labels refuse control
 * and bidi override characters, free text keeps them.
 */

let s: TestServer;
let key: string;
let site: string;
useServer(async (server) => {
  s = server;
  key = (await s.org('Limits')).key;
  const r = await call(s, 'POST', '/api/v1/websites', { key, body: { name: 'Zentro', url: 'https://zentro.example.com' } });
  expect(r.status).toBe(201);
  site = r.body.website.id;
}, sharedServer);

const TOO_DEEP = `body must be nested at most ${MAX_JSON_DEPTH} levels deep`;
const NOT_UTF8 = 'body must be valid UTF-8';

/** `[[[ ... ]]]`, `depth` arrays inside one another. */
const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** `{"a":{"a": ... 1 ... }}`, `depth` objects inside one another. */
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** A raw POST: the body as given, bytes or text. */
async function raw(path: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  const res = await fetch(new URL(path, s.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const text = await res.text();
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: json };
}

/** A tools/call whose arguments are `args` spliced in as raw JSON text. */
const toolCall = (name: string, args: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;

describe('nesting', () => {
  it('given a REST body nested 100,000 levels deep, then 400 naming the limit, nothing written, and the server still answers', async () => {
    const before = await s.head();
    for (const body of [nestedArrays(100_000), nestedObjects(100_000), `{"name":${nestedArrays(100_000)}}`]) {
      expect(await raw('/api/v1/websites', body, { 'x-api-key': key })).toEqual({ status: 400, body: { error: TOO_DEEP } });
    }
    expect(await s.head()).toBe(before);
    expect((await call(s, 'GET', '/api/v1/websites', { key })).status).toBe(200);
  });

  it('given authenticated and anonymous MCP calls nested 100,000 levels deep, then 400 before any parsing', async () => {
    const before = await s.head();
    const deep = toolCall('check_public_ai_access', `{"domain":${nestedArrays(100_000)}}`);
    expect(await raw(MCP, deep, { 'x-api-key': key })).toEqual({ status: 400, body: { error: TOO_DEEP } });
    expect(await raw(MCP, deep)).toEqual({ status: 400, body: { error: TOO_DEEP } });
    // (anonymous bodies stop at 512 KiB: 50,000 objects deep fit)
    expect(await raw(MCP, nestedObjects(50_000))).toEqual({ status: 400, body: { error: TOO_DEEP } });
    expect(await s.head()).toBe(before);
    // the tool server still answers, with and without a key (without one, only the public tool's call)
    const ping = '{"jsonrpc":"2.0","id":2,"method":"ping"}';
    expect((await raw(MCP, toolCall('check_public_ai_access', '{"domain":"localhost"}'))).status).toBe(200);
    expect((await raw(MCP, ping, { 'x-api-key': key })).status).toBe(200);
  });

  it('given exactly 32 levels, then the body is parsed and judged by its schema; 33 levels are refused', async () => {
    // the body object is level 1; `extra` holds 31 more
    const at = (depth: number) => `{"name":"N","url":"https://n.example.com","extra":${nestedArrays(depth - 1)}}`;
    expect(await raw('/api/v1/websites', at(MAX_JSON_DEPTH), { 'x-api-key': key })).toEqual({ status: 400, body: { error: 'extra is not allowed' } });
    expect(await raw('/api/v1/websites', at(MAX_JSON_DEPTH + 1), { 'x-api-key': key })).toEqual({ status: 400, body: { error: TOO_DEEP } });
    // the request, its params and the arguments are three levels
    const tool = (depth: number) => toolCall('check_public_ai_access', `{"domain":${nestedArrays(depth - 3)}}`);
    const fits = await raw(MCP, tool(MAX_JSON_DEPTH));
    expect(fits.status).toBe(200);
    expect(fits.body.result.structuredContent).toMatchObject({ status: 400, error: 'domain: must be a string' });
    expect(await raw(MCP, tool(MAX_JSON_DEPTH + 1))).toEqual({ status: 400, body: { error: TOO_DEEP } });
  });

  it('given brackets inside strings, then they do not count as nesting', async () => {
    const name = `[{${'['.repeat(150)}"\\"{{{`;
    const r = await call(s, 'POST', '/api/v1/topics', { key, body: { website_id: site, name } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.topic.name).toBe(name);
  });
});

describe('UTF-8', () => {
  const body = (nameBytes: number[]) =>
    Buffer.concat([Buffer.from('{"website_id":"'), Buffer.from(site), Buffer.from('","name":"'), Buffer.from(nameBytes), Buffer.from('"}')]);

  it('given a body that is not valid UTF-8, then 400 and nothing stored (never U+FFFD)', async () => {
    const before = await s.head();
    const cases = {
      'a stray continuation byte': [0x41, 0x80],
      'an invalid byte': [0x41, 0xff],
      'a truncated sequence': [0x41, 0xe2, 0x82],
      'an overlong NUL': [0xc0, 0x80],
      'a surrogate in CESU-8': [0xed, 0xa0, 0x80],
      'a code point past U+10FFFF': [0xf4, 0x90, 0x80, 0x80],
    };
    for (const [what, bytes] of Object.entries(cases)) {
      expect(await raw('/api/v1/topics', body(bytes), { 'x-api-key': key }), what).toEqual({ status: 400, body: { error: NOT_UTF8 } });
      expect(
        await raw(MCP, Buffer.concat([Buffer.from(toolCall('check_public_ai_access', '{"domain":"')), Buffer.from(bytes), Buffer.from('"}')])),
        what,
      ).toEqual({
        status: 400,
        body: { error: NOT_UTF8 },
      });
    }
    expect(await s.head()).toBe(before);
    const names = (await call(s, 'GET', '/api/v1/topics', { key, query: { website_id: site } })).body.data.map((t: { name: string }) => t.name);
    expect(names.some((n: string) => n.includes('\ufffd'))).toBe(false);
  });

  it('given valid multi-byte UTF-8 (and a byte order mark), then it is stored exactly', async () => {
    const name = 'Zürich 日本 😀';
    const r = await raw('/api/v1/topics', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body([...Buffer.from(name)])]), { 'x-api-key': key });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.topic.name).toBe(name);
  });
});

describe('URLs', () => {
  it('given a path or query parameter whose percent-encoding is not UTF-8, then 400 naming it', async () => {
    expect(await call(s, 'GET', `/api/v1/websites/by-external-id/ab%FFcd`, { key })).toMatchObject({
      status: 400,
      body: { error: 'external_id: must be valid percent-encoded UTF-8' },
    });
    expect(await call(s, 'GET', `/api/v1/activity?order=desc&entity_type=%E2%82`, { key })).toMatchObject({
      status: 400,
      body: { error: 'entity_type: must be valid percent-encoded UTF-8' },
    });
    // a lone "%" is malformed, not a literal percent sign passed on as is
    expect(await call(s, 'GET', `/api/v1/activity?change_type=100%`, { key })).toMatchObject({
      status: 400,
      body: { error: 'change_type: must be valid percent-encoded UTF-8' },
    });
    expect(await call(s, 'GET', `/api/v1/activity?%FF=1`, { key })).toMatchObject({
      status: 400,
      body: { error: 'query: must be valid percent-encoded UTF-8' },
    });
    // well-formed encodings pass: "+" and %20 are spaces, %25 a percent sign
    const ok = await call(s, 'GET', `/api/v1/activity?entity_type=a+b%20c%25`, { key });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('given an external id longer than the router default (100) in the path, then its schema decides: 255 passes, 256 is refused naming it', async () => {
    const found = await call(s, 'GET', `/api/v1/websites/by-external-id/${'e'.repeat(255)}`, { key });
    expect(found).toMatchObject({ status: 404 });
    expect(await call(s, 'GET', `/api/v1/websites/by-external-id/${'e'.repeat(256)}`, { key })).toMatchObject({
      status: 400,
      body: { error: 'external_id: must be at most 255 characters' },
    });
  });
});

describe('names and labels', () => {
  const REFUSED: [string, string][] = [
    ['a newline', 'Acme\nCorp'],
    ['a tab', 'Acme\tCorp'],
    ['an escape', 'Acme\u001b[31mCorp'],
    ['DEL', 'Acme\u007fCorp'],
    ['a C1 control', 'Acme\u0085Corp'],
    ['a line separator', 'Acme\u2028Corp'],
  ];
  const BIDI: [string, string][] = [
    ['a right-to-left override', 'Acme\u202eproC'],
    ['a left-to-right embedding', '\u202aAcme'],
    ['a pop', 'Acme\u202c'],
    ['a first-strong isolate', 'Acme\u2068Corp\u2069'],
  ];

  const answer = { prompt_id: '00000000-0000-4000-8000-000000000000', model: 'chatgpt', run_at: '2025-03-14T10:00:00Z', text: 'A' };
  const product = { name: 'Shoe', brand: 'Stride', merchant: 'Shop', price: 10, currency: 'EUR' };
  /** a tracked page whose title the PATCH below would change */
  let contentId: string;

  /** Every name or label field that exists today, as one request each (`v` in the field; POST unless named). */
  const labelled = (v: string): [string, string, object, string?][] => [
    ['/api/v1/websites', 'name', { name: v, url: 'https://l.example.com' }],
    [
      '/api/v1/websites/provision',
      'competitors[0].name',
      { name: 'P', url: 'https://p.example.com', competitors: [{ name: v, url: 'https://r.example.net' }] },
    ],
    ['/api/v1/websites/provision', 'topics[0].name', { name: 'P', url: 'https://p.example.com', topics: [{ name: v }] }],
    ['/api/v1/competitors', 'name', { website_id: site, name: v, url: 'https://c.example.net' }],
    ['/api/v1/competitors', 'identifiers[0]', { website_id: site, name: 'C', url: 'https://c.example.net', identifiers: [v] }],
    ['/api/v1/topics', 'name', { website_id: site, name: v }],
    ['/api/v1/prompts', 'tags[0]', { website_id: site, text: 'Q?', tags: [v] }],
    ['/api/v1/personas', 'name', { website_id: site, name: v }],
    ['/api/v1/attributes', 'name', { website_id: site, name: v }],
    ['/api/v1/locations', 'location', { website_id: site, location: v, country: 'DE' }],
    ['/api/v1/locations', 'country', { website_id: site, location: 'Berlin', country: v }],
    ['/api/v1/prompt-schedules', 'name', { website_id: site, name: v, models: ['chatgpt'], frequency: 'daily' }],
    ['/api/v1/saved-views', 'name', { website_id: site, name: v }],
    ['/api/v1/saved-views', 'filters.prompt_tags[0]', { website_id: site, name: 'V', filters: { prompt_tags: [v] } }],
    ['/api/v1/api-keys', 'name', { name: v }],
    ['/api/v1/content/track', 'urls[0].title', { website_id: site, urls: [{ url: 'https://zentro.example.com/x', title: v }] }],
    [`/api/v1/content/${contentId}`, 'title', { website_id: site, title: v }, 'PATCH'],
    ['/api/v1/responses/import', 'responses[0].external_id', { website_id: site, responses: [{ ...answer, external_id: v }] }],
    ...(['name', 'brand', 'merchant'] as const).map((f): [string, string, object] => [
      '/api/v1/responses/import',
      `responses[0].products[0].${f}`,
      { website_id: site, responses: [{ ...answer, products: [{ ...product, [f]: v }] }] },
    ]),
  ];

  it('given a control or bidi override character in any name or label, then 400 naming the field and nothing written', async () => {
    const tracked = await call(s, 'POST', '/api/v1/content/track', {
      key,
      body: { website_id: site, urls: [{ url: 'https://zentro.example.com/kept' }] },
    });
    expect(tracked.status, JSON.stringify(tracked.body)).toBe(200);
    contentId = tracked.body.created[0].content_id;
    const before = await s.head();
    for (const [cases, message] of [
      [REFUSED, LABEL_CONTROL],
      [BIDI, LABEL_BIDI],
    ] as const) {
      for (const [what, value] of cases) {
        for (const [path, field, body, method = 'POST'] of labelled(value)) {
          const r = await call(s, method, path, { key, body });
          expect(r, `${path} ${field} with ${what}`).toMatchObject({ status: 400, body: { error: `${field}: ${message}` } });
        }
      }
    }
    expect(await s.head()).toBe(before);
  });

  it('given the same characters in free text (prompt text, descriptions), then they are kept verbatim', async () => {
    const text = 'Line one\nline\ttwo \u202eevil\u202c \u0085 \u001b[0m done?';
    const p = await call(s, 'POST', '/api/v1/prompts', { key, body: { website_id: site, text } });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    expect(p.body.prompt.text).toBe(text);
    const a = await call(s, 'POST', '/api/v1/attributes', { key, body: { website_id: site, name: 'Price', description: text } });
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(a.body.attribute.description).toBe(text);
  });

  it('given right-to-left names without overrides (letters and marks), then they are accepted', async () => {
    const name = 'שלום\u200fעולם عربي';
    const r = await call(s, 'POST', '/api/v1/personas', { key, body: { website_id: site, name } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.persona.name).toBe(name);
  });
});

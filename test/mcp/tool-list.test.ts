import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, sharedServer, type TestServer } from '../support/server';
import { apiKey, post } from './support';

/**
 * What an assistant reads before calling anything: the tools/list answer, over real HTTP. Every input is described,
 * every tool says whether it only reads, and the whole list is pinned by a snapshot. After an intended change:
 * `npx vitest run test/mcp/tool-list.test.ts --update` (the file first: `-u` takes the next word as its value), then
 * review the snapshot's diff.
 */

let s: TestServer;
let key: string;
let tools: Tool[];
beforeAll(async () => {
  // it reads only the tool list and the OpenAPI document, with its own organization's key
  s = await sharedServer();
  ({ key } = await s.org('Tool list'));
  const r = await post(s, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, apiKey(key));
  expect(r.status).toBe(200);
  tools = r.body.result.tools;
});
afterAll(async () => {
  await s?.close();
});

type JsonSchema = Record<string, unknown>;

/** Every object property anywhere in a JSON Schema (nested objects, array items, unions, maps), by its path. */
function properties(schema: JsonSchema, path: string, out: { path: string; schema: JsonSchema }[] = []) {
  for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    out.push({ path: `${path}.${name}`, schema: sub });
    properties(sub, `${path}.${name}`, out);
  }
  if (schema.items && typeof schema.items === 'object') properties(schema.items as JsonSchema, `${path}[]`, out);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
    properties(schema.additionalProperties as JsonSchema, `${path}{}`, out);
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
    for (const sub of (schema[key] ?? []) as JsonSchema[]) properties(sub, path, out);
  }
  for (const [name, sub] of Object.entries((schema.$defs ?? {}) as Record<string, JsonSchema>)) properties(sub, `${path}#${name}`, out);
  return out;
}

const undescribed = (schema: JsonSchema, path: string) =>
  properties(schema, path)
    .filter((p) => typeof p.schema.description !== 'string' || p.schema.description.trim() === '')
    .map((p) => p.path);

describe('MCP tool list: what an assistant reads', () => {
  it('given the walk over a schema, then it finds a property without a description however deeply it sits', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'string', description: 'described' },
        list: {
          type: 'array',
          description: 'x',
          items: { type: 'object', properties: { deep: { anyOf: [{ type: 'object', properties: { leaf: { type: 'number' } } }] } } },
        },
      },
    };
    expect(undescribed(schema, 't')).toEqual(['t.list[].deep', 't.list[].deep.leaf']);
  });

  it('given a key, then every input property of every tool, nested ones included, carries a description', () => {
    expect(tools.length).toBeGreaterThan(30);
    const missing = tools.flatMap((t) => undescribed(t.inputSchema as JsonSchema, t.name));
    expect(missing).toEqual([]);
    // the walk reaches the depths it claims to: items of arrays inside items of arrays
    const walked = tools.flatMap((t) => properties(t.inputSchema as JsonSchema, t.name).map((p) => p.path));
    expect(walked).toEqual(expect.arrayContaining(['import_responses.responses[].observations[].score', 'get_mention_rate.filters.start_date']));
  });

  it('given a key, then every tool has a title and a description and states whether it only reads', () => {
    for (const t of tools) {
      expect(t.title, t.name).toMatch(/\S/);
      expect(t.description, t.name).toMatch(/\S/);
      expect(t.annotations?.title, t.name).toBe(t.title);
      expect(typeof t.annotations?.readOnlyHint, t.name).toBe('boolean');
      expect(typeof t.annotations?.openWorldHint, t.name).toBe('boolean');
      if (t.annotations?.readOnlyHint) continue;
      // the protocol's defaults for a write are destructive and not idempotent: a write states both
      expect(typeof t.annotations?.destructiveHint, t.name).toBe('boolean');
      expect(typeof t.annotations?.idempotentHint, t.name).toBe('boolean');
    }
  });

  it('given a key, then every tool says what it does and when to use it in at most 200 characters (field details stay in the schemas)', () => {
    const long = tools.filter((t) => (t.description ?? '').length > 200).map((t) => `${t.name} (${t.description?.length})`);
    expect(long).toEqual([]);
  });

  it('given the tool names, then list_, get_, check_, search_ and compare_ tools only read, and every delete, remove or update is destructive', () => {
    const reads = tools.filter((t) => /^(list|get|check|search|compare)_/.test(t.name));
    const writes = tools.filter((t) => !/^(list|get|check|search|compare)_/.test(t.name));
    expect(reads.length).toBeGreaterThan(0);
    expect(writes.length).toBeGreaterThan(0);
    for (const t of reads) expect(t.annotations?.readOnlyHint, t.name).toBe(true);
    for (const t of writes) expect(t.annotations?.readOnlyHint, t.name).toBe(false);
    for (const t of tools.filter((x) => /^(delete|remove|update)_/.test(x.name))) {
      expect(t.annotations, t.name).toMatchObject({ destructiveHint: true, idempotentHint: true });
    }
    for (const t of tools.filter((x) => /^(create|add|import|start)_/.test(x.name))) {
      expect(t.annotations?.destructiveHint, t.name).toBe(false);
    }
    // the two checks fetch the domain they are given, a run and a pitch report ask the answer engines (the pitch also reads
    // the prospect's site), an invite emails a person, a new pillar's research fetches the website's pages, generation
    // and revision ask the writer engine (optimize fetches the live page); the rest stays in aivis's own data
    expect(
      tools
        .filter((t) => t.annotations?.openWorldHint)
        .map((t) => t.name)
        .sort(),
    ).toEqual([
      'check_ai_access',
      'check_public_ai_access',
      'create_pillar',
      'create_pitch',
      'generate_content',
      'invite_user',
      'revise_content',
      'start_response_run',
    ]);
  });

  it('given the OpenAPI document, then a field a REST route and a tool share carries the same description in both', async () => {
    const doc = (await call(s, 'GET', '/api/v1/openapi.json', { key })).body;
    const input = (name: string) => (tools.find((t) => t.name === name)!.inputSchema.properties ?? {}) as Record<string, JsonSchema>;
    const body = (path: string) => doc.paths[path].post.requestBody.content['application/json'].schema.properties as Record<string, JsonSchema>;

    const observations = body('/api/v1/attributes/observations');
    expect(observations.entity_ids.description).toMatch(/website_id for the brand/);
    expect(observations.entity_ids.description).toBe(input('get_attribute_observations').entity_ids.description);
    expect(body('/api/v1/competitors').url.description).toBe(input('add_competitor').url.description);
    // REST's own date form is described as REST takes it, not as the tools do
    expect(body('/api/v1/metrics/mention-rate/cumulative').filters.properties).toMatchObject({
      start_date: { description: expect.stringMatching(/^Start of the range: YYYY-MM-DD .* or an ISO 8601 date-time/) },
    });
    // a query parameter carries its field's description where documentation tools read it
    const pageNum = doc.paths['/api/v1/responses'].get.parameters.find((p: { name: string }) => p.name === 'page_num');
    expect(pageNum).toMatchObject({ in: 'query', description: input('list_responses').page_num.description });
  });

  it('given a key, then the tool list (names, titles, descriptions, input and output schemas, hints) is the reviewed one', async () => {
    await expect(`${JSON.stringify(tools, null, 2)}\n`).toMatchFileSnapshot('./__snapshots__/mcp-tools.json');
  });
});

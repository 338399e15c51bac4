import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { markPromptAnswered } from '../../commands/catalog/mark-prompt-answered';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { MODEL_IDS, MODELS } from '../../src/domain/models';
import { newSite } from '../support/http';
import { call, type TestServer, sharedServer } from '../support/server';
import { UNKNOWN_ID, type World } from '../support/tenancy';
import { type AreaClients, toolOk, useAreaClients } from './support';

let s: TestServer, w: World, a: Client, scoped: Client, b: Client, refused: AreaClients['refused'];
useAreaClients((ctx) => ({ s, w, a, scoped, b, refused } = ctx), sharedServer);

describe('MCP catalogue tools', () => {
  it('given an authenticated client, then the catalogue tools are listed with their input schemas', async () => {
    const { tools } = await a.listTools();
    const names = tools.map((t) => t.name);
    for (const n of [
      'list_competitors',
      'add_competitor',
      'update_competitor',
      'remove_competitor',
      'list_topics',
      'create_topic',
      'delete_topic',
      'list_prompts',
      'create_prompt',
      'update_prompt',
      'delete_prompt',
      'list_personas',
      'create_persona',
      'list_locations',
      'create_location',
      'list_attributes',
      'create_attribute',
      'get_prompt_schedules',
      'create_prompt_schedule',
      'update_prompt_schedule',
      'list_saved_views',
      'create_saved_view',
      'update_saved_view',
      'list_models',
    ]) {
      expect(names).toContain(n);
    }
    expect(tools.find((t) => t.name === 'delete_topic')!.inputSchema).toMatchObject({
      type: 'object',
      properties: { website_id: { type: 'string' }, topic_id: { type: 'string' }, delete_prompts: { type: 'boolean' } },
      required: ['website_id', 'topic_id'],
    });
    expect(tools.find((t) => t.name === 'update_prompt')!.inputSchema).toMatchObject({
      required: expect.arrayContaining(['website_id', 'prompt_id']),
    });
  });

  it('given writes through tools, then REST lists them and tools list what REST wrote', async () => {
    const site = await newSite(s, w.a.key);
    const c = await toolOk(a, 'add_competitor', { website_id: site, name: 'Rival', url: 'https://rival-mcp.example.net', identifiers: ['RivalCo'] });
    expect(c.competitor).toMatchObject({ name: 'Rival', normalized_url: 'rival-mcp.example.net/' });
    const rest = await call(s, 'GET', '/api/v1/competitors', { key: w.a.key, query: { website_id: site } });
    expect(rest.body).toEqual({ competitors: [c.competitor] });
    expect((await toolOk(a, 'update_competitor', { website_id: site, competitor_id: c.competitor.id, name: 'Rival Inc' })).competitor.name).toBe(
      'Rival Inc',
    );

    await call(s, 'POST', '/api/v1/locations', {
      key: w.a.key,
      body: { website_id: site, location: 'Paris, France', country: 'France', city: 'Paris' },
    });
    const loc = await toolOk(a, 'create_location', { website_id: site, location: 'Berlin, Germany', country: 'Germany' });
    expect(loc).toMatchObject({ id: expect.any(String), location: 'Berlin, Germany', country: 'Germany' });
    expect((await toolOk(a, 'list_locations', { website_id: site })).data.map((l: { location: string }) => l.location)).toEqual([
      'Paris, France',
      'Berlin, Germany',
    ]);

    await toolOk(a, 'create_persona', { website_id: site, name: 'CFO' });
    expect((await toolOk(a, 'list_personas', { website_id: site })).data).toHaveLength(1);
    await toolOk(a, 'create_attribute', { website_id: site, name: 'Price' });
    expect((await toolOk(a, 'list_attributes', { website_id: site })).data.map((x: { name: string }) => x.name)).toEqual(['Price']);

    const view = await toolOk(a, 'create_saved_view', { website_id: site, name: 'No X', filters: { models_not: [MODEL_IDS[0]] } });
    await toolOk(a, 'update_saved_view', { website_id: site, view_id: view.view.id, name: 'Renamed' });
    expect((await toolOk(a, 'list_saved_views', { website_id: site })).data).toEqual([
      { id: view.view.id, name: 'Renamed', filters: { models_not: [MODEL_IDS[0]] } },
    ]);

    const sch = await toolOk(a, 'create_prompt_schedule', {
      website_id: site,
      name: 'Weekly',
      models: [MODEL_IDS[0]],
      starts_on: '2026-01-01',
      frequency: 'weekly',
    });
    await toolOk(a, 'update_prompt_schedule', { website_id: site, schedule_id: sch.schedule.id, archived: true });
    const schedules = (await toolOk(a, 'get_prompt_schedules', { website_id: site })).data;
    expect(schedules.map((x: { id: string; archived: boolean }) => [x.id, x.archived])).toEqual([
      ['default', false],
      [sch.schedule.id, true],
    ]);
    expect(schedules[0]).toMatchObject({ starts_on: null, ends_on: null });

    expect((await toolOk(a, 'list_models', {})).data).toEqual(MODELS.map((m) => ({ id: m.id, label: m.label, shopping: m.shopping })));
    expect((await toolOk(a, 'remove_competitor', { website_id: site, competitor_id: c.competitor.id })).success).toBe(true);
    expect((await toolOk(a, 'list_competitors', { website_id: site })).competitors).toEqual([]);
  });

  it('given delete_topic and delete_prompt, then the spec delete semantics hold as over REST', async () => {
    const site = await newSite(s, w.a.key);
    const topic = (await toolOk(a, 'create_topic', { website_id: site, name: 'Pricing' })).topic;
    const p1 = (await toolOk(a, 'create_prompt', { website_id: site, text: 'one', topic_id: topic.id })).prompt;
    const p2 = (await toolOk(a, 'create_prompt', { website_id: site, text: 'two', topic_id: topic.id, type: 'branded' })).prompt;
    const lone = (await toolOk(a, 'create_prompt', { website_id: site, text: 'lone' })).prompt;
    await markPromptAnswered(
      { store: s.rt.store, organizationId: w.a.organization_id, actor: SYSTEM_ACTOR },
      { website_id: site, prompt_id: lone.id },
    );
    expect(await toolOk(a, 'delete_prompt', { website_id: site, prompt_id: lone.id })).toEqual({ success: true, soft_deleted: true });

    expect(await toolOk(a, 'delete_topic', { website_id: site, topic_id: topic.id, delete_prompts: true })).toEqual({
      success: true,
      name: 'Pricing',
      deleted_prompt_count: 2,
    });
    expect((await toolOk(a, 'list_prompts', { website_id: site })).data).toEqual([]);
    expect(await toolOk(a, 'create_topic', { website_id: site, name: 'pricing' })).toEqual({ topic, restored: true });
    expect((await toolOk(a, 'list_prompts', { website_id: site })).data.map((p: { id: string }) => p.id)).toEqual([p1.id, p2.id]);
    expect((await toolOk(a, 'update_prompt', { website_id: site, prompt_id: p1.id, status: 'paused' })).prompt.status).toBe('paused');

    expect(await toolOk(a, 'delete_topic', { website_id: site, topic_id: topic.id })).toEqual({
      success: true,
      name: 'Pricing',
      deleted_prompt_count: 0,
    });
    expect((await toolOk(a, 'list_prompts', { website_id: site })).data).toHaveLength(2);
    expect((await toolOk(a, 'list_topics', { website_id: site })).data).toEqual([]);
    expect(await toolOk(a, 'delete_prompt', { website_id: site, prompt_id: p2.id })).toEqual({ success: true, soft_deleted: false });
  });

  it("given unknown ids, bad input, another organization or a scoped key outside the website, then REST's errors and nothing written", async () => {
    const site = await newSite(s, w.a.key);
    await refused(a, 'delete_prompt', { website_id: site, prompt_id: UNKNOWN_ID }, 404, 'Prompt not found');
    await refused(a, 'delete_topic', { website_id: site, topic_id: UNKNOWN_ID }, 404, 'Topic not found');
    await refused(a, 'update_saved_view', { website_id: site, view_id: UNKNOWN_ID, name: 'X' }, 404, 'Saved view not found');
    await refused(
      a,
      'create_saved_view',
      { website_id: site, name: 'Inverted', filters: { start_date: '2026-03-03', end_date: '2026-03-01' } },
      400,
      'filters.end_date: is before start_date (2026-03-03T00:00:00.000Z)',
    );
    await refused(a, 'list_competitors', {}, 400, 'website_id is required');
    await refused(a, 'delete_topic', { website_id: site, topic_id: UNKNOWN_ID, delete_prompts: 'true' }, 400, 'delete_prompts: must be a boolean');
    await refused(a, 'create_prompt', { website_id: site, text: 'x'.repeat(2001) }, 400, 'text: must be at most 2000 characters');
    await refused(
      a,
      'create_prompt_schedule',
      { website_id: site, name: 'S', models: ['nope'], frequency: 'daily' },
      400,
      /^models\[0\]: unknown model "nope"/,
    );
    await refused(
      a,
      'create_prompt_schedule',
      { website_id: site, name: 'S', models: [MODEL_IDS[0]], starts_on: '2026-02-02', ends_on: '2026-02-01', frequency: 'daily' },
      400,
      'ends_on: must not be before starts_on',
    );
    await refused(
      a,
      'update_prompt',
      { website_id: site, prompt_id: UNKNOWN_ID },
      400,
      'body: nothing to change: send text, topic_id, type, status or tags',
    );
    await refused(a, 'list_prompts', { website_id: UNKNOWN_ID }, 404, 'Website not found');
    await refused(b, 'list_prompts', { website_id: site }, 403, 'Unauthorized access to this website');
    await refused(b, 'create_topic', { website_id: site, name: 'T' }, 403, 'Unauthorized access to this website');
    await refused(scoped, 'get_prompt_schedules', { website_id: w.a.a1 }, 403, 'Unauthorized access to this website');
    await refused(scoped, 'delete_prompt', { website_id: w.a.a1, prompt_id: UNKNOWN_ID }, 403, 'Unauthorized access to this website');
    expect((await toolOk(scoped, 'list_saved_views', { website_id: w.a.a2 })).data).toEqual([]);
  });
});

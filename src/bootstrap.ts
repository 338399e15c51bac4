import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { provisionDemoWebsite } from '../commands/catalog/demo-catalog';
import { trackDemoContent } from '../commands/content/demo-content';
import { requestDemoDraft } from '../commands/content/generate-content';
import { createOrganization } from '../commands/organizations/create-organization';
import { requestPitch } from '../commands/pitches/request-pitch';
import { SYSTEM_ACTOR } from './domain/events';
import { isDomainError } from './domain/errors';
import type { Runtime } from './runtime';
import { startRun } from '../commands/responses/start-run';
import { utcDay } from './domain/dates';
import { requestValuation } from '../commands/ai-value/request-valuation';

const HISTORY_DAYS = 30;

/**
 * The demo's last 30 days of answers, written by the simulated engine through the real pipeline: one backfill run
 * per day (default schedule), answered by the response workers, analyzed by the projections. Starts the runs and
 * returns; a log line says when they are done.
 */
async function backfillDemoHistory(rt: Runtime, organizationId: string, websiteId: string): Promise<void> {
  const ctx = { store: rt.store, organizationId, websiteId, actor: SYSTEM_ACTOR };
  const today = Date.parse(`${utcDay(new Date())}T00:00:00Z`);
  const runIds: string[] = [];
  for (let d = HISTORY_DAYS; d >= 1; d--) {
    const day = utcDay(new Date(today - d * 86_400_000));
    const r = await startRun(ctx, { website_id: websiteId, schedule_id: null, trigger: 'backfill', day, run_at: `${day}T09:00:00.000Z` });
    if (isDomainError(r)) throw new Error(r.message);
    runIds.push(r.result.run_id);
  }
  void (async () => {
    const t0 = Date.now();
    for (;;) {
      await new Promise((res) => setTimeout(res, 1000));
      const done = await rt.database.db('rm_runs').whereIn('id', runIds).whereNotNull('finished_at').count<{ n: string }[]>('* as n');
      if (Number(done[0].n) === runIds.length) break;
    }
    rt.logger.info({ runs: runIds.length, seconds: Math.round((Date.now() - t0) / 1000) }, 'demo history: 30 days of simulated answers are in');
    // the AI search value of the demo, computed as soon as its answers are analyzed (not at the next pass)
    await rt.waitForReadModels(await rt.store.headPosition(), ['answers'], 30_000);
    await requestValuation(ctx, { website_id: websiteId, reason: 'demo', slot: 'demo' });
  })().catch(() => undefined);
}

/**
 * The demo organization's pitch report on a prospect, run by the pitch worker with the simulated engines. The
 * prospect's site is given as already researched: an embedded first start fetches nothing from the outside world.
 */
async function requestDemoPitch(rt: Runtime, organizationId: string): Promise<void> {
  const r = await requestPitch(
    { store: rt.store, organizationId, actor: SYSTEM_ACTOR },
    { website_url: 'https://zentro.example.com', country: 'United States', language: 'English' },
    {
      key: 'demo-pitch',
      db: rt.database.db,
      allowance: 10,
      models: rt.config.pitchModels,
      researched: { company_name: 'Zentro', company_description: 'Zentro is project management software for agencies and growing teams.' },
    },
  );
  if (isDomainError(r)) throw new Error(r.message);
}

/**
 * First embedded start: provisions the demo organization and prints how to use it. The demo key is kept in
 * DATA_DIR/demo-key.txt (embedded, local only) so it can be printed again on later starts.
 */
export async function bootstrapEmbedded(rt: Runtime, baseUrl: string): Promise<void> {
  const keyFile = join(rt.config.dataDir, 'demo-key.txt');
  let key: string;
  let fresh = false;
  if (existsSync(keyFile)) {
    key = readFileSync(keyFile, 'utf8').trim();
  } else {
    const existing = await rt.database.db('rm_organizations').count<{ count: string }[]>('* as count');
    if (Number(existing[0].count) > 0) return;
    const r = await createOrganization(rt.store, {
      name: 'Demo Brand',
      plan: 'enterprise',
      features: ['pitch', 'knowledge_base', 'ai_search_value', 'seo_recommendations', 'shopping'],
      pitch_allowance: 10,
      owner_email: 'owner@demo.aivis.local',
    });
    if (isDomainError(r)) throw new Error(r.message);
    const demo = await provisionDemoWebsite({ store: rt.store, organizationId: r.result.organization_id, actor: SYSTEM_ACTOR });
    await rt.waitForReadModels(demo.position ?? r.position, 'all');
    const site = await rt.database.db('rm_websites').where('id', demo.website_id).first('url');
    const prompts = await rt.database.db('rm_prompts').where('website_id', demo.website_id).orderBy('seq').pluck('text');
    const ctx = { store: rt.store, organizationId: r.result.organization_id, websiteId: demo.website_id, actor: SYSTEM_ACTOR };
    const content = await trackDemoContent(ctx, { website_id: demo.website_id, url: site.url, prompts });
    if (isDomainError(content)) throw new Error(content.message);
    const topic = await rt.database.db('rm_topics').where('website_id', demo.website_id).whereNull('deleted_at').orderBy('seq').first('id', 'name');
    const topicPrompts = await rt.database
      .db('rm_prompts')
      .where('website_id', demo.website_id)
      .modify((q) => (topic ? q.where('topic_id', topic.id) : q))
      .orderBy('seq')
      .limit(3)
      .select('id', 'text');
    const brand = await rt.database.db('rm_websites').where('id', demo.website_id).first('name', 'normalized_url');
    await requestDemoDraft(
      ctx,
      {
        website_id: demo.website_id,
        brand: { name: brand.name, domain: brand.normalized_url.split('/')[0] },
        topic: topic ?? null,
        prompts: topicPrompts,
      },
      rt.config.contentModel,
    );
    await backfillDemoHistory(rt, r.result.organization_id, demo.website_id);
    await requestDemoPitch(rt, r.result.organization_id);
    key = r.result.api_key;
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
    fresh = true;
  }
  const mcp = { mcpServers: { aivis: { type: 'http', url: `${baseUrl}/api/mcp`, headers: { 'x-api-key': key } } } };
  process.stdout.write(
    [
      '',
      'aivis demo organization is ready.',
      `  demo key (global, partner): ${key}`,
      `  try:  curl -s -H 'x-api-key: ${key}' ${baseUrl}/api/v1/websites`,
      ...(fresh
        ? [
            "  the demo website's last 30 days of answers are being written by the simulated engine (about a minute)",
            `  a demo pitch report is being made: curl -s -H 'x-api-key: ${key}' ${baseUrl}/api/v1/pitches (its report_url is the page to share)`,
          ]
        : []),
      '  MCP client config:',
      JSON.stringify(mcp, null, 2)
        .split('\n')
        .map((l) => `    ${l}`)
        .join('\n'),
      '',
      '',
    ].join('\n'),
  );
}

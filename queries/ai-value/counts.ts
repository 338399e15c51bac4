import type { Knex } from 'knex';
import { decodeFacts, type FactDictionaries } from '../../src/analysis/facts';
import { emptyCounts, type ModelCounts, type ModelInput, type TopicInput } from './model';

const DAY_MS = 86_400_000;
export const WINDOW_DAYS = 28;
export const WINDOW_MS = WINDOW_DAYS * DAY_MS;

interface TopicRow {
  id: string;
  name: string;
}
interface PromptRow {
  id: string;
  text: string;
  topic_id: string | null;
  type: 'branded' | 'non_branded';
}

/**
 * The model's input for one website at time `at` (docs/VALUATION.md, section 1): per topic and model, the answers of
 * the trailing 28 days and of the 28 before, read from the metrics' fact chunks (rm_fact_chunks: the same mentions and
 * positions the metrics count; the brand is every chunk's first entity column), plus the catalogue and the topics' own
 * economics. Only the 56 days' chunks are read: the cost does not grow with the website's history, and a valuation
 * does not pull a whole website into an instance's metrics memory.
 */
export async function valuationInput(db: Knex, websiteId: string, at: Date): Promise<Omit<ModelInput, 'attribution'> & { factsVersion: string }> {
  const end = at.getTime();
  const wStart = end - WINDOW_MS;
  const pStart = wStart - WINDOW_MS;
  const dayOf = (ms: number) => new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
  const [topics, prompts, economics, head] = await Promise.all([
    db('rm_topics').where('website_id', websiteId).whereNull('deleted_at').orderBy('seq').select('id', 'name') as Promise<TopicRow[]>,
    db('rm_prompts').where('website_id', websiteId).whereNull('soft_deleted_at').select('id', 'text', 'topic_id', 'type') as Promise<PromptRow[]>,
    db('rm_topic_economics').where('website_id', websiteId).select('topic_id', 'monthly_searches', 'cpc_usd') as Promise<
      { topic_id: string; monthly_searches: number; cpc_usd: number }[]
    >,
    db('rm_fact_sites').where('website_id', websiteId).first(db.raw('version::text as version')) as Promise<{ version: string } | undefined>,
  ]);
  const chunks: { day: string; meta: FactDictionaries & { n: number }; data: Buffer }[] = await db('rm_fact_chunks')
    .where('website_id', websiteId)
    .andWhere('day', '>=', dayOf(pStart))
    .andWhere('day', '<=', dayOf(end))
    .select(db.raw('day::text as day'), 'meta', 'data');

  const topicIndex = new Map(topics.map((t, i) => [t.id, i]));
  const promptsOf = topics.map(() => [] as PromptRow[]);
  for (const p of prompts) {
    const i = p.topic_id ? topicIndex.get(p.topic_id) : undefined;
    if (i !== undefined) promptsOf[i].push(p);
  }
  const branded = promptsOf.map((ps) => ps.filter((p) => p.type === 'branded').length * 2 > ps.length);
  // a live prompt's topic when its type is the topic's (-1: counted in no topic); not live: absent
  const topicOfPrompt = new Map<string, number>();
  for (const p of prompts) {
    const i = p.topic_id ? topicIndex.get(p.topic_id) : undefined;
    topicOfPrompt.set(p.id, i !== undefined && (p.type === 'branded') === branded[i] ? i : -1);
  }

  const models = new Map<string, number>();
  const modelIndex = (m: string) => {
    let k = models.get(m);
    if (k === undefined) models.set(m, (k = models.size));
    return k;
  };
  const win: ModelCounts[][] = topics.map(() => []);
  const prev: ModelCounts[][] = topics.map(() => []);
  const counts = (arr: ModelCounts[][], topic: number, model: number) => (arr[topic][model] ??= emptyCounts());
  const locations = topics.map(() => new Set<string>());
  let measured = 0;
  for (const row of chunks) {
    const c = decodeFacts(row.meta, row.data);
    const dayStart = Date.parse(`${row.day}T00:00:00Z`);
    const E = c.entities.length;
    const topicOf = Int32Array.from(c.prompts, (id) => topicOfPrompt.get(id) ?? -2);
    const modelOf = Int32Array.from(c.models, modelIndex);
    for (let i = 0; i < c.n; i++) {
      const t = dayStart + c.t[i];
      if (t < pStart || t >= end) continue;
      const topic = topicOf[c.prompt[i]];
      if (topic === -2) continue;
      const inWindow = t >= wStart;
      if (inWindow) measured++;
      if (topic < 0) continue;
      const k = counts(inWindow ? win : prev, topic, modelOf[c.model[i]]);
      k.n++;
      const base = i * E;
      const brand = E > 0 ? c.pos[base] : 0;
      if (brand !== 0) {
        k.mentioned++;
        k.B += 1 / brand;
      }
      for (let e = 0; e < E; e++) {
        const p = c.pos[base + e];
        if (p !== 0) k.D += 1 / p;
      }
      const location = c.locations[c.location[i]];
      if (inWindow && location !== null) locations[topic].add(location);
    }
  }

  // personas are not in the facts: distinct ones per prompt over the window, from the answers themselves
  const personaRows: { prompt_id: string; personas: string[] }[] = (
    await db.raw(
      `select prompt_id, array_agg(distinct persona_id::text) as personas from rm_responses
        where website_id = ? and run_at >= ? and run_at < ? and persona_id is not null group by prompt_id`,
      [websiteId, new Date(wStart).toISOString(), new Date(end).toISOString()],
    )
  ).rows;
  const personas = topics.map(() => new Set<string>());
  for (const r of personaRows) {
    const i = topicOfPrompt.get(r.prompt_id) ?? -1;
    if (i >= 0) for (const x of r.personas) personas[i].add(x);
  }

  const econ = new Map(economics.map((e) => [e.topic_id, { monthly_searches: Number(e.monthly_searches), cpc_usd: Number(e.cpc_usd) }]));
  const modelNames = [...models.keys()];
  const byModel = (arr: ModelCounts[][], i: number) => {
    const m = new Map<string, ModelCounts>();
    arr[i].forEach((k, j) => {
      if (k && k.n > 0) m.set(modelNames[j], k);
    });
    return m;
  };
  const out: TopicInput[] = topics.map((t, i) => ({
    topic_id: t.id,
    name: t.name,
    branded: branded[i],
    prompts: promptsOf[i].map((p) => p.text),
    economics: econ.get(t.id) ?? null,
    window: byModel(win, i),
    previous: byModel(prev, i),
    locations: locations[i].size,
    personas: personas[i].size,
  }));
  return { topics: out, measured_responses: measured, factsVersion: head?.version ?? '0' };
}

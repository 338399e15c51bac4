import type { Knex } from 'knex';
import { analyzeAnswer } from '../../src/analysis/answer';
import { dayAndTime } from '../../src/analysis/facts';
import { siteEntities } from '../site-entities';
import { brandMentioned, brandOf } from './content-tables';
import { entitiesJson } from './export-line';
import type { Recorded } from './handlers';
import type { StoredMatched } from './schema';
import { type AnswerFacts, compile, factRow, intoParts, lockSite, productRows, slotsOf, storedMatched, writeParts } from './writers';

/** Answers read per round trip when a website's history is re-derived. */
const REDERIVE_PAGE = 5000;
/** Answers re-analyzed between two turns of the event loop (a few milliseconds). */
const REDERIVE_SLICE = 250;

/**
 * Stores the analyses a re-derivation changed: the answers' entity matches and their export lines' entities part, and
 * the content hub's `mentioned` of the answers whose brand mention changed.
 */
async function writeRederived(
  trx: Knex.Transaction,
  matched: { id: string; matched: StoredMatched; entities: string }[],
  mentioned: { id: string; mentioned: boolean }[],
) {
  if (matched.length) {
    await trx.raw(
      `update rm_responses r set matched = x.matched, export_entities = x.entities
         from json_to_recordset(?::json) as x(id uuid, matched jsonb, entities text) where r.id = x.id`,
      [JSON.stringify(matched)],
    );
  }
  if (mentioned.length) {
    const ids = mentioned.map((x) => x.id);
    const values = mentioned.map((x) => x.mentioned);
    for (const table of ['rm_content_answers', 'rm_content_cites']) {
      await trx.raw(
        `update ${table} t set mentioned = x.mentioned from unnest(?::uuid[], ?::boolean[]) as x(id, mentioned) where t.response_id = x.id`,
        [ids, values],
      );
    }
  }
}

/**
 * Re-analyzes a website's whole history with its current entities: every chunk, every product card, the stored
 * entity matches of each answer and the content hub's brand mention.
 */
export async function rederive(trx: Knex.Transaction, websiteId: string, version: string): Promise<void> {
  await lockSite(trx, websiteId);
  const entities = (await siteEntities(trx, [websiteId])).get(websiteId)!;
  const ids = entities.map((e) => e.id);
  const compiled = compile(websiteId, entities);
  const slots = slotsOf(entities);
  const entitiesPart = entitiesJson(websiteId, entities);
  await trx('rm_fact_chunks').where('website_id', websiteId).delete();
  const brand = brandOf(entities);
  let byDay = new Map<string, ReturnType<typeof factRow>[]>();
  type Page = Array<AnswerFacts & { id: string; run_at: Date; matched: StoredMatched; export_entities: string }>;
  const fetchPage = (after: { run_at: Date; id: string } | null): Promise<Page> => {
    const q = trx('rm_responses')
      .where('website_id', websiteId)
      .orderBy([{ column: 'run_at' }, { column: 'id' }])
      .limit(REDERIVE_PAGE)
      .select('id', 'run_at', 'prompt_id', 'model', 'location_id', 'schedule_id', 'text', 'citations', 'matched', 'export_entities');
    if (after) q.andWhereRaw('(run_at, id) > (?, ?)', [after.run_at, after.id]);
    return q;
  };
  const flush = async (days: [string, ReturnType<typeof factRow>[]][]) =>
    writeParts(
      trx,
      websiteId,
      days.flatMap(([day, list]) => intoParts(ids, day, 0, undefined, list)),
      version,
    );
  // the next page is asked for before this one is analyzed: Postgres reads while node analyzes
  let pending: Promise<Page> | null = fetchPage(null);
  while (pending) {
    const page: Page = await pending;
    const last = page[page.length - 1];
    pending = page.length === REDERIVE_PAGE ? fetchPage({ run_at: last.run_at, id: last.id }) : null;
    const changed: { id: string; matched: StoredMatched; entities: string }[] = [];
    const mentionChanged: { id: string; mentioned: boolean }[] = [];
    for (let i = 0; i < page.length; i++) {
      // the server shares this process: a whole page analyzed at once kept its requests waiting for ~150 ms
      if (i > 0 && i % REDERIVE_SLICE === 0) await new Promise((r) => setImmediate(r));
      const a = page[i];
      const { day } = dayAndTime(a.run_at);
      let list = byDay.get(day);
      if (!list) byDay.set(day, (list = []));
      const analysis = analyzeAnswer(compiled, a);
      list.push(factRow(analysis, slots, a));
      const matched = storedMatched(analysis);
      const part = entitiesPart(matched);
      // compared part by part: jsonb gives its keys back in its own order
      const same = JSON.stringify(matched.m) === JSON.stringify(a.matched.m) && JSON.stringify(matched.c) === JSON.stringify(a.matched.c);
      // a renamed competitor changes the export line of an answer whose matches stay the same
      if (!same || part !== a.export_entities) changed.push({ id: a.id, matched, entities: part });
      if (!same) {
        const mentioned = brandMentioned(analysis, brand);
        if (mentioned !== a.matched.m.some(([id]) => id === brand)) mentionChanged.push({ id: a.id, mentioned });
      }
    }
    await writeRederived(trx, changed, mentionChanged);
    if (!last) break;
    // answers come in time order: every day before the last one seen is complete
    const lastDay = dayAndTime(last.run_at).day;
    const done = [...byDay].filter(([day]) => day !== lastDay);
    if (done.length) {
      await flush(done);
      byDay = new Map([...byDay].filter(([day]) => day === lastDay));
    }
  }
  await flush([...byDay]);

  const products = await trx('rm_responses')
    .where('website_id', websiteId)
    .whereIn('id', trx('rm_response_products').where('website_id', websiteId).distinct('response_id'))
    .select('id as response_id', 'products', 'run_at', 'prompt_id', 'model', 'location_id', 'schedule_id');
  const rows = products.flatMap(
    (p: {
      response_id: string;
      products: Recorded['data']['products'];
      run_at: Date;
      prompt_id: string;
      model: string;
      location_id: string | null;
      schedule_id: string | null;
    }) => productRows(compiled, { ...p, website_id: websiteId, run_at: p.run_at.toISOString() }),
  );
  for (let i = 0; i < rows.length; i += 2000) {
    await trx.raw(
      `update rm_response_products p set entity_id = x.entity_id, matched_by = x.matched_by, is_own = x.is_own
         from json_to_recordset(?::json) as x(response_id uuid, idx int, entity_id uuid, matched_by text, is_own boolean)
        where p.response_id = x.response_id and p.idx = x.idx`,
      [
        JSON.stringify(
          rows
            .slice(i, i + 2000)
            .map((r) => ({ response_id: r.response_id, idx: r.idx, entity_id: r.entity_id, matched_by: r.matched_by, is_own: r.is_own })),
        ),
      ],
    );
  }
  await trx('rm_fact_sites')
    .insert({ website_id: websiteId, version, generation: 1, entities: JSON.stringify(ids), rederived: version })
    .onConflict('website_id')
    .merge({ version, generation: trx.raw('rm_fact_sites.generation + 1'), entities: JSON.stringify(ids), rederived: version });
}

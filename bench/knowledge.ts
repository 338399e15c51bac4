import { request } from 'undici';
import { listFacts, searchFacts } from '../queries/knowledge/knowledge';
import { deterministicId } from '../src/domain/ids';
import { seededRandom } from '../src/domain/random';
import { info, median, nowNs, quantile, report, sampleUs, secondsSince } from './lib';
import { serverBench } from './with-server';

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ren',
  'tor',
  'sa',
  'vel',
  'din',
  'qua',
  'pe',
  'zor',
  'bri',
  'nal',
  'fe',
  'gus',
  'hol',
  'ix',
  'jun',
  'mar',
  'ost',
];
/**
 * 3,000 words of two or three syllables, drawn with a Zipf-Mandelbrot law (weight 1/(rank+50)): the commonest word is in
 * about 7% of facts, most words are rare (English stop words, which would be in every fact, are not indexed anyway).
 */
function vocabulary(rand: () => number) {
  const words = new Set<string>();
  while (words.size < 3000) {
    const n = 2 + Math.floor(rand() * 2);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
    words.add(w);
  }
  const list = [...words];
  const weights = list.map((_, i) => 1 / (i + 50));
  const total = weights.reduce((x, y) => x + y, 0);
  const cumulative: number[] = [];
  let acc = 0;
  for (const w of weights) cumulative.push((acc += w / total));
  const pick = () => {
    const r = rand();
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < r) lo = mid + 1;
      else hi = mid;
    }
    return list[lo];
  };
  return { list, pick };
}

const STATUSES = ['approved', 'approved', 'approved', 'pending', 'rejected'];
const SOURCES = ['manual', 'site', 'site', 'ai_response', 'oracle'];

export const knowledge = serverBench(1, {
  name: 'knowledge',
  about: 'knowledge base: full-text search and a filtered page over 100,000 facts of one website, over HTTP',
  async run({ s, db, quick }) {
    const total = quick ? 20_000 : 100_000;
    const websiteId = ((await db('rm_websites').where('organization_id', s.organizationId).first('id')) as { id: string }).id;
    const rand = seededRandom(18);
    const vocab = vocabulary(rand);
    // 20 pillars; the facts written straight into the read model (the projection's table, its indexes and generated vector)
    const pillars = Array.from({ length: 20 }, (_, i) => deterministicId('bench-pillar', String(i)));
    const t0 = nowNs();
    await db('rm_kb_pillars').insert(
      pillars.map((id, i) => ({
        id,
        organization_id: s.organizationId,
        website_id: websiteId,
        name: `Pillar ${i}`,
        description: '',
        status: 'draft',
        created_at: new Date(),
        updated_at: new Date(),
      })),
    );
    const start = Date.parse('2026-01-01T00:00:00Z');
    const BATCH = 2000;
    for (let b = 0; b < total; b += BATCH) {
      const rows = [];
      for (let i = b; i < Math.min(total, b + BATCH); i++) {
        const n = 8 + Math.floor(rand() * 14);
        const words = Array.from({ length: n }, () => vocab.pick());
        const at = new Date(start + i * 60_000);
        rows.push({
          id: deterministicId('bench-fact', String(i)),
          organization_id: s.organizationId,
          website_id: websiteId,
          pillar_id: rand() < 0.1 ? null : pillars[Math.floor(rand() * pillars.length)],
          text: `${words.join(' ')}.`,
          source_url: rand() < 0.5 ? `https://example.com/p/${i}` : null,
          source_quote: null,
          confidence: 'high',
          review_status: STATUSES[Math.floor(rand() * STATUSES.length)],
          source_type: SOURCES[Math.floor(rand() * SOURCES.length)],
          response_id: null,
          duplicate_of: rand() < 0.02 ? deterministicId('bench-fact', String(Math.max(0, i - 1))) : null,
          replaces: null,
          archived_at: rand() < 0.02 ? at : null,
          created_at: at,
          updated_at: at,
        });
      }
      await db('rm_kb_facts').insert(rows);
    }
    await db.raw('vacuum analyze rm_kb_facts');
    info(
      `${total} facts of one website over 20 pillars written in ${secondsSince(t0).toFixed(1)} s (Zipf-Mandelbrot vocabulary of 3,000 words, 8 to 21 words a fact)`,
    );

    const get = async (path: string, query: Record<string, string>) => {
      const r = await request(`${s.url}${path}?${new URLSearchParams(query)}`, { headers: { 'x-api-key': s.key } });
      const body = (await r.body.json()) as { facts: unknown[] };
      if (r.statusCode !== 200) throw new Error(`${path}: ${r.statusCode} ${JSON.stringify(body).slice(0, 200)}`);
      return body.facts.length;
    };
    const n = quick ? 100 : 400;
    // two words drawn as the facts' words are (common words are searched most, as people do)
    const queries = Array.from({ length: n + 20 }, () => `${vocab.pick()} ${vocab.pick()}`);
    let hits = 0;
    for (let i = 0; i < 20; i++) await get('/api/v1/knowledge-base/facts/search', { website_id: websiteId, query: queries[n + i] });
    const search = (
      await sampleUs(n, async (i) => {
        hits += await get('/api/v1/knowledge-base/facts/search', { website_id: websiteId, query: queries[i], limit: '10' });
      })
    )
      .map((us) => us / 1000)
      .sort((a, b) => a - b);
    const matching = (
      await db.raw(
        `select avg(c)::int as avg, max(c) as max from (select (select count(*) from rm_kb_facts f where f.website_id = ? and f.archived_at is null and f.duplicate_of is null and f.review_status = 'approved' and f.tsv @@ websearch_to_tsquery('english', q)) as c from unnest(?::text[]) q) t`,
        [websiteId, queries.slice(0, 50)],
      )
    ).rows[0] as { avg: number; max: string };
    report('facts_search_ms', quantile(search, 0.95), 'ms', {
      goal: { op: '<=', value: 20 },
      note: `p95 of ${n} two-word searches (limit 10) over HTTP, ${total} facts of one website; median ${median(search).toFixed(2)} ms, ${(hits / n).toFixed(1)} facts answered on average; approved facts matching a query: ${matching.avg} on average, ${matching.max} at most (first 50 queries)`,
    });

    // the same searches without HTTP (the query alone), and a trivial read of the same API as the reference of what HTTP,
    // the key and the gate cost on this machine now
    const sql = (await sampleUs(n, (i) => searchFacts(db, websiteId, queries[i], 10))).map((us) => us / 1000).sort((a, b) => a - b);
    report('facts_search_sql_ms', quantile(sql, 0.95), 'ms', {
      note: `p95 of the same searches as a query alone (searchFacts), median ${median(sql).toFixed(2)} ms`,
    });
    const plan = (
      await db.raw(
        `explain (analyze, costs off) select f.id, ts_rank(f.tsv, q) as rank from rm_kb_facts f, websearch_to_tsquery('english'::regconfig, ?) q
        where f.website_id = ? and f.archived_at is null and f.duplicate_of is null and f.review_status = 'approved' and f.tsv @@ q
        order by rank desc, f.created_at desc, f.id limit 10`,
        [queries[0], websiteId],
      )
    ).rows.map((r: Record<string, string>) => Object.values(r)[0]);
    info(`plan of "${queries[0]}": ${plan.map((l: string) => l.trim()).join(' | ')}`);
    for (let i = 0; i < 20; i++) await get('/api/v1/knowledge-base/pillars', { website_id: websiteId }).catch(() => 0);
    const base = (
      await sampleUs(n, () =>
        request(`${s.url}/api/v1/knowledge-base/pillars?website_id=${websiteId}`, { headers: { 'x-api-key': s.key } }).then((r) => r.body.dump()),
      )
    )
      .map((us) => us / 1000)
      .sort((a, b) => a - b);
    report('pillars_list_ms', quantile(base, 0.95), 'ms', {
      note: `reference: p95 of listing the 20 pillars over HTTP (the request, the key, the gate, one small query), median ${median(base).toFixed(2)} ms`,
    });

    const filters = Array.from({ length: n + 20 }, (_, i) => ({
      website_id: websiteId,
      page_size: '40',
      page_num: String(i % 5),
      ...(i % 3 === 0 ? { pillar_id: pillars[i % pillars.length] } : {}),
      ...(i % 3 === 1 ? { review_status: 'approved' } : {}),
      ...(i % 3 === 2 ? { unfiled: 'true', include_oracle: 'true' } : {}),
    }));
    for (let i = 0; i < 20; i++) await get('/api/v1/knowledge-base/facts', filters[n + i]);
    const list = (await sampleUs(n, (i) => get('/api/v1/knowledge-base/facts', filters[i]))).map((us) => us / 1000).sort((a, b) => a - b);
    report('facts_list_ms', quantile(list, 0.95), 'ms', {
      goal: { op: '<=', value: 15 },
      note: `p95 of ${n} filtered pages of 40 over HTTP (by pillar, by review status, unfiled with oracle facts; pages 0 to 4), median ${median(list).toFixed(2)} ms`,
    });
    const listSql = (
      await sampleUs(n, (i) => {
        const f = filters[i];
        return listFacts(db, websiteId, {
          pillar_id: f.pillar_id,
          unfiled: f.unfiled === 'true',
          review_status: f.review_status as 'approved' | undefined,
          include_oracle: f.include_oracle === 'true',
          include_duplicates: false,
          page_num: Number(f.page_num),
          page_size: 40,
        });
      })
    )
      .map((us) => us / 1000)
      .sort((a, b) => a - b);
    report('facts_list_sql_ms', quantile(listSql, 0.95), 'ms', {
      note: `p95 of the same pages as a query alone (listFacts), median ${median(listSql).toFixed(2)} ms`,
    });
  },
});

import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { request } from 'undici';
import { newEventsFor } from '../commands/handle';
import { CRAWLER_STREAM_PREFIX, type EventData, SYSTEM_ACTOR } from '../src/domain/events';
import { seededRandom } from '../src/domain/random';
import { type Bench, cpuMeter, info, median, nowNs, perUnit, quantile, report, rssPeak, sampleUs, secondsSince } from './lib';
import { withBenchServer } from './with-server';

const AGENTS = [
  ['GPTBot', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.1; +https://openai.com/gptbot'],
  ['ClaudeBot', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)'],
  ['Googlebot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
  ['ChatGPT-User', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot'],
  ['PerplexityBot', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)'],
] as const;
const BROWSERS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
];
const MON = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A deterministic combined-format log: 20% AI crawlers (Googlebot from its ranges, the others spread), 2,000 pages. */
function* logLines(n: number, seed: number, startMs: number): Generator<string> {
  const rand = seededRandom(seed);
  for (let i = 0; i < n; i++) {
    const t = new Date(startMs + i * 50);
    const stamp = `${String(t.getUTCDate()).padStart(2, '0')}/${MON[t.getUTCMonth()]}/${t.getUTCFullYear()}:${String(t.getUTCHours()).padStart(2, '0')}:${String(t.getUTCMinutes()).padStart(2, '0')}:${String(t.getUTCSeconds()).padStart(2, '0')} +0000`;
    const ai = rand() < 0.2;
    const agent = ai ? AGENTS[Math.floor(rand() * AGENTS.length)] : null;
    const ua = agent ? agent[1] : BROWSERS[Math.floor(rand() * BROWSERS.length)];
    const ip =
      agent?.[0] === 'Googlebot'
        ? `66.249.66.${Math.floor(rand() * 32)}`
        : `${20 + Math.floor(rand() * 180)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`;
    const page = Math.floor(2000 * rand() ** 2);
    const status = rand() < 0.9 ? 200 : rand() < 0.5 ? 404 : 301;
    yield `${ip} - - [${stamp}] "GET /docs/page-${page}?ref=${i % 7} HTTP/1.1" ${status} ${1000 + Math.floor(rand() * 50_000)} "https://www.google.com/" "${ua}"\n`;
  }
}

async function post(url: string, key: string, websiteId: string, body: Readable, headers: Record<string, string> = {}) {
  const r = await request(`${url}/api/v1/crawler-logs?website_id=${websiteId}&format=combined`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'text/plain', ...headers },
    body,
  });
  const out = (await r.body.json()) as Record<string, number>;
  if (r.statusCode !== 200) throw new Error(`crawler-logs: ${r.statusCode} ${JSON.stringify(out)}`);
  return out;
}

export const crawlers: Bench = {
  name: 'crawlers',
  about: 'AI crawler analytics: combined-log ingestion over HTTP, RSS while streaming a gzip body, activity reads over 90 days',
  async run({ quick }) {
    const lines = Number(process.env.BENCH_CRAWLER_LINES ?? (quick ? 200_000 : 1_000_000));
    const dir = mkdtempSync(join(tmpdir(), 'bench-crawlers-'));
    try {
      await withBenchServer(1, async (s) => {
        const db = s.rt.database.db;
        const websiteId = ((await db('rm_websites').where('organization_id', s.organizationId).first('id')) as { id: string }).id;

        // BENCH_ONLY=ingest|activity runs one half
        const only = process.env.BENCH_ONLY;
        if (only !== 'activity') {
          // 1. throughput: a file of `lines` lines streamed from disk (the client's cost is a file read)
          const file = join(dir, 'access.log');
          await pipeline(Readable.from(logLines(lines, 42, Date.parse('2026-11-01T00:00:00Z'))), createWriteStream(file));
          const bytes = statSync(file).size;
          const meter = await cpuMeter(db);
          const t0 = nowNs();
          const counts = await post(s.url, s.key, websiteId, createReadStream(file, { highWaterMark: 256 * 1024 }));
          const seconds = secondsSince(t0);
          const cpu = perUnit(await meter.stop(), lines, 'line');
          const cpuUs = cpu.nodeUs;
          report('crawler_ingest_lines_per_s', lines / seconds, 'lines/s', {
            cpu,
            goal: { op: '>=', value: 150_000 },
            note: `${lines} combined lines (${(bytes / 1e6).toFixed(0)} MB, ${counts.ai_hits} AI hits, ${counts.verified} verified) in ${seconds.toFixed(2)} s over HTTP into one instance, read model waited for; CPU ${cpuUs.toFixed(2)} us a line (server and client in one process)`,
          });
          const meterAgain = await cpuMeter(db);
          const again = nowNs();
          const dup = await post(s.url, s.key, websiteId, createReadStream(file, { highWaterMark: 256 * 1024 }));
          const againSeconds = secondsSince(again);
          report('crawler_reimport_lines_per_s', lines / againSeconds, 'lines/s', {
            cpu: perUnit(await meterAgain.stop(), lines, 'line'),
            note: `the same file again: ${dup.duplicates} duplicates, ${dup.ai_hits} added`,
          });

          // 2. RSS growth while a gzip body streams in (generated on the fly, never on disk)
          const gzLines = Number(process.env.BENCH_CRAWLER_GZ_LINES ?? (quick ? 1_000_000 : 5_000_000));
          let sent = 0;
          const gz = Readable.from(logLines(gzLines, 7, Date.parse('2026-10-01T00:00:00Z'))).pipe(createGzip({ level: 1 }));
          gz.on('data', (c: Buffer) => {
            sent += c.length;
          });
          const rss = rssPeak(50);
          const tg = nowNs();
          const gzCounts = await post(s.url, s.key, websiteId, gz, { 'content-encoding': 'gzip' });
          const { base, peak } = rss.stop();
          report('crawler_stream_rss_growth_mb', (peak - base) / 1e6, 'MB', {
            goal: { op: '<=', value: 128 },
            note: `peak RSS over the start while streaming ${(sent / 1e6).toFixed(0)} MB of gzip (${gzLines} lines, ${gzCounts.ai_hits} AI hits) in ${secondsSince(tg).toFixed(1)} s; client, gzip and server in one process`,
          });
        }
        if (only === 'ingest') return;
        // 3. activity reads: `hits` hits over 90 days written straight into the read model
        const total = quick ? 1_000_000 : 10_000_000;
        const rand = seededRandom(9);
        const bots = ['GPTBot', 'ClaudeBot', 'Googlebot', 'ChatGPT-User', 'PerplexityBot', 'OAI-SearchBot', 'bingbot', 'Amazonbot'];
        const day0 = Date.parse('2026-08-01T00:00:00Z');
        type Row = EventData<'CrawlerHitsImported'>['rows'][number];
        let rows: Row[] = [];
        let hits = 0;
        let nRows = 0;
        const tw = nowNs();
        const ctx = { store: s.rt.store, organizationId: s.organizationId, websiteId, actor: SYSTEM_ACTOR };
        // through the projection, as imports write them: events of 5,000 aggregated rows
        const flush = async () => {
          if (!rows.length) return;
          await s.rt.store.append(
            `${CRAWLER_STREAM_PREFIX}${websiteId}`,
            newEventsFor(ctx, [{ type: 'CrawlerHitsImported', data: { website_id: websiteId, import_id: 'bench', rows } }]),
            'any',
          );
          nRows += rows.length;
          rows = [];
        };
        // per day and bot, about 300 pages (of 2,000) with their statuses: hits spread to reach `total`
        const perRow = Math.max(1, Math.round(total / (90 * bots.length * 330)));
        for (let d = 0; d < 90 && hits < total; d++) {
          const day = new Date(day0 + d * 86_400_000).toISOString().slice(0, 10);
          for (const bot of bots) {
            const pages = new Set<number>();
            while (pages.size < 300) pages.add(Math.floor(2000 * rand() ** 2));
            for (const p of pages) {
              for (const status of rand() < 0.1 ? [200, 404] : [200]) {
                const h = 1 + Math.floor(rand() * 2 * perRow);
                hits += h;
                const verification = rand() < 0.85 ? 'verified' : rand() < 0.5 ? 'unverified' : 'unverifiable';
                rows.push({ day, bot, url: `example.com/docs/page-${p}`, status, verification, hits: h, last_seen: `${day}T12:00:00.000Z` });
              }
            }
            if (rows.length >= 5000) await flush();
          }
        }
        await flush();
        await s.rt.runners.get('crawlers')!.waitFor(await s.rt.store.lastPosition(), 600_000);
        await db.raw('vacuum analyze rm_crawler_hits');
        info(
          `${hits} hits over 90 days in ${nRows} rows (8 bots, 2,000 pages, ~300 a bot a day) appended as events and projected in ${secondsSince(tw).toFixed(1)} s`,
        );
        const get = (query: Record<string, string>) =>
          request(
            `${s.url}/api/v1/crawlers/activity?${new URLSearchParams({ website_id: websiteId, start_date: '2026-08-01', end_date: '2026-10-29', ...query })}`,
            {
              headers: { 'x-api-key': s.key },
            },
          ).then(async (r) => {
            if (r.statusCode !== 200) throw new Error(`activity: ${r.statusCode} ${await r.body.text()}`);
            return r.body.dump();
          });
        const n = quick ? 50 : 200;
        const variants: Record<string, string>[] = [{}, { group_by: 'status' }, { verification: 'all' }, { bots: 'GPTBot,ClaudeBot' }];
        const first = nowNs();
        await get({});
        info(`first activity read (a website's hits loaded where held in memory): ${(secondsSince(first) * 1000).toFixed(0)} ms`);
        for (let i = 0; i < 10; i++) await get(variants[i % variants.length]);
        const readMeter = await cpuMeter(db);
        const ms = (await sampleUs(n, (i) => get(variants[i % variants.length]))).map((us) => us / 1000).sort((a, b) => a - b);
        report('crawler_activity_ms', quantile(ms, 0.95), 'ms', {
          cpu: perUnit(await readMeter.stop(), n, 'request'),
          goal: { op: '<=', value: 50 },
          note: `p95 of ${n} activity reads over HTTP over 90 days (per bot; per bot and status; all verifications; two bots), ${hits} hits in ${nRows} rows; median ${median(ms).toFixed(1)} ms`,
        });
        const dayMeter = await cpuMeter(db);
        const byDay = (await sampleUs(Math.ceil(n / 4), () => get({ group_by: 'day' }))).map((us) => us / 1000).sort((a, b) => a - b);
        report('crawler_activity_by_day_ms', quantile(byDay, 0.95), 'ms', {
          cpu: perUnit(await dayMeter.stop(), Math.ceil(n / 4), 'request'),
          note: `p95 of group_by=day over the same 90 days; median ${median(byDay).toFixed(1)} ms`,
        });
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

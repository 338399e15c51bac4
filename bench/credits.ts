import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CREDIT_BUCKETS } from '../projections/credits';
import { creditUsage } from '../queries/credits/usage';
import { cpuMeter, info, nowNs, quantile, report, sampleUs, secondsSince } from './lib';
import { serverBench } from './with-server';

/**
 * get_credit_usage over 1 M credit events (one organization, 10 websites, every kind, spread over 100 days), range
 * 90d, through the tool server over HTTP: the rows are written straight into the credits read model (events and
 * daily and hourly totals, as its projection writes them), since the figure is about the read.
 */
export const credits = serverBench(0, {
  name: 'credits',
  about: 'get_credit_usage (range 90d) over 1 M credit events, through MCP over HTTP',
  async run({ s, db, quick }) {
    const n = quick ? 100_000 : 1_000_000;
    const t0 = nowNs();
    const sites = Array.from({ length: 10 }, (_, i) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`);
    const kinds = [
      'response',
      'observation_judge',
      'content_generation',
      'content_revision',
      'pitch',
      'prompt_discovery',
      'seo_recommendation',
      'pillar_research',
    ];
    await db.raw(
      `insert into rm_credit_events (id, organization_id, website_id, kind, credits, ref_id, model, occurred_at)
       select gen_random_uuid()::text, ?::uuid, (?::uuid[])[1 + i % 10], (?::text[])[1 + (i * 7) % 8], 0.25 * (1 + i % 9), 'ref-' || i, null,
              date_trunc('milliseconds', now() - (i::float8 / ? * interval '100 days'))
         from generate_series(1, ?) as g(i)`,
      [s.organizationId, sites, kinds, n, n],
    );
    for (const b of CREDIT_BUCKETS) {
      await db.raw(
        `insert into ${b.table} (organization_id, website_key, bucket, kind, credits, events)
         select organization_id, coalesce(website_id::text, ''), to_timestamp(floor(extract(epoch from occurred_at) * 1000 / ?) * ? / 1000), kind, sum(credits), count(*)
           from rm_credit_events group by 1, 2, 3, 4`,
        [b.ms, b.ms],
      );
      // the organization's totals where the read model keeps them (not in commits before them, which `--ab` runs too)
      const org = (b as { orgTable?: string }).orgTable;
      if (org)
        await db.raw(
          `insert into ${org} (organization_id, bucket, kind, credits, events)
           select organization_id, bucket, kind, sum(credits), sum(events) from ${b.table} group by 1, 2, 3`,
        );
      await db.raw(`analyze ${b.table}${(b as { orgTable?: string }).orgTable ? `, ${(b as { orgTable?: string }).orgTable}` : ''}`);
    }
    await db.raw('analyze rm_credit_events');
    info(`${n.toLocaleString('en')} credit events and their hourly totals written in ${secondsSince(t0).toFixed(1)} s`);

    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/api/mcp', s.url), { requestInit: { headers: { 'x-api-key': s.key } } }));
    try {
      const once = async () => {
        const r = await client.callTool({ name: 'get_credit_usage', arguments: { range: '90d' } });
        if (r.isError) throw new Error(JSON.stringify(r.content));
        return r.structuredContent as { total_credits: number };
      };
      for (let i = 0; i < 20; i++) await once();
      const reads = quick ? 100 : 300;
      const meter = await cpuMeter(db);
      const us = (await sampleUs(reads, () => once())).sort((a, b) => a - b);
      const used = await meter.stop();
      // per request, by hand: the same file runs in `--ab`'s checkouts of commits whose lib has no perUnit
      const cpu = { nodeUs: used.nodeUs / reads, pgUs: used.pgUs / reads, per: 'request' };
      report('credit_usage_ms', quantile(us, 0.95) / 1000, 'ms', {
        goal: { op: '<=', value: 30 },
        cpu,
        note: `p95 of get_credit_usage range 90d over ${n.toLocaleString('en')} credit events, MCP over HTTP (p50 ${(quantile(us, 0.5) / 1000).toFixed(1)} ms)`,
      });
      // the same CPU as a figure of its own, which `--ab` compares (node: the server and the MCP client, both in this process)
      report('credit_usage_cpu_us_per_request', cpu.nodeUs + cpu.pgUs, 'us', {
        note: `node ${cpu.nodeUs.toFixed(0)} us + Postgres ${cpu.pgUs.toFixed(0)} us per get_credit_usage`,
      });
      // the sum checked against a plain scan of the events
      const end = new Date();
      const start = new Date(end.getTime() - 90 * 86_400_000);
      const fast = await creditUsage(db, { organizationId: s.organizationId, websiteIds: null }, { range: '90d', start, end });
      const scan = await db.raw(`select sum(credits)::float8 as c from rm_credit_events where occurred_at >= ? and occurred_at <= ?`, [
        start.toISOString(),
        end.toISOString(),
      ]);
      info(`90d total from hours + edges ${fast.total_credits}, from a scan of the events ${Number(scan.rows[0].c)}`);
      const queries = 200;
      const qMeter = await cpuMeter(db);
      const q = (
        await sampleUs(queries, () => creditUsage(db, { organizationId: s.organizationId, websiteIds: null }, { range: '90d', start, end }))
      ).sort((a, b) => a - b);
      const qUsed = await qMeter.stop();
      info(`the query alone: p95 ${(quantile(q, 0.95) / 1000).toFixed(1)} ms`);
      // the read path alone (no MCP, no HTTP, no authentication), which `--ab` compares too
      report('credit_query_cpu_us_per_request', (qUsed.nodeUs + qUsed.pgUs) / queries, 'us', {
        note: `node ${(qUsed.nodeUs / queries).toFixed(0)} us + Postgres ${(qUsed.pgUs / queries).toFixed(0)} us per creditUsage() call, range 90d of the whole organization (p50 ${(quantile(q, 0.5) / 1000).toFixed(2)} ms)`,
      });
    } finally {
      await client.close();
    }
  },
});

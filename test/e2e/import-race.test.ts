import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_IDS } from '../../src/domain/models';
import { buildSite, type Site } from '../support/answers';
import { onRealPostgres } from '../support/db';
import { call, caughtUp, startServer, type TestServer, useTwoInstances } from '../support/server';
import { until } from '../support/until';
import { nodeArgs } from '../support/bundles';

// Honest counts and no hangs (issue 14, item 9): imports of one file at once each report what they stored, over HTTP,
// in the CLI and in the log's ResponsesImported; a CLI waiting on a dead lease holder takes over. Processes that share
// one database need a Postgres server.
if (!onRealPostgres) console.log('import races and lease takeover skipped: DATABASE_URL unset (needs a server several processes share)');

const T0 = '2026-03-01T10:00:00.000Z';
const N = 6;

interface Cli {
  status: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The operator CLI as a child process against the database at `url` (no NATS: the CLI never uses the bus). */
function cli(url: string, args: string[]): Promise<Cli> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), DATABASE_URL: url, LOG_LEVEL: 'warn' };
  delete env.NATS_URL;
  const t0 = Date.now();
  const p = spawn(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (d) => (stdout += d));
  p.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => p.on('exit', (status) => resolve({ status, stdout, stderr, ms: Date.now() - t0 })));
}

const items = (site: Site, prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    external_id: `${prefix}-${i}`,
    prompt_id: site.prompts[0].id,
    model: MODEL_IDS[i % 3],
    run_at: T0,
    text: `Answer ${i}: Acme is fine.`,
    // some answers carry observations: those events are claimed by the same ids
    ...(i % 7 === 0
      ? { observations: [{ entity_id: site.id, attribute_id: site.attributes[0].id, positive: true, score: 0.5, text_span: 'fine' }] }
      : {}),
  }));

describe.skipIf(!onRealPostgres)('imports of one file at once', () => {
  let dir: string;
  const two = useTwoInstances('Import races', () => {
    dir = mkdtempSync(join(tmpdir(), 'aivis-import-race-'));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** What the log holds for a website: its answers, and each import call's ResponsesImported with its own stream's answers. */
  const logOf = async (websiteId: string) => {
    const db = two.a.rt.database.db;
    const recorded = await db('aivis_events')
      .where('type', 'ResponseRecorded')
      .whereRaw(`data->>'website_id' = ?`, [websiteId])
      .select('stream_id', db.raw(`data->>'external_id' as external_id`));
    const imports = await db('aivis_events')
      .where('type', 'ResponsesImported')
      .whereRaw(`data->>'website_id' = ?`, [websiteId])
      .select('stream_id', 'data');
    return {
      recorded: recorded as { stream_id: string; external_id: string }[],
      imports: imports as { stream_id: string; data: { import_id: string; imported: number; skipped: number; response_ids: string[] } }[],
    };
  };

  /** The log, the answers read model and the activity feed agree with what the calls reported. */
  const expectHonest = async (site: Site, n: number, reported: { imported: number; skipped: number }[]) => {
    expect(reported.reduce((s, r) => s + r.imported, 0)).toBe(n);
    for (const r of reported) expect(r.imported + r.skipped).toBe(n);
    const log = await logOf(site.id);
    // every answer stored once
    expect(log.recorded).toHaveLength(n);
    expect(new Set(log.recorded.map((r) => r.external_id)).size).toBe(n);
    // each call's ResponsesImported says what its own stream holds, and the calls' reports are those events
    for (const imp of log.imports) {
      const mine = log.recorded.filter((r) => r.stream_id === imp.stream_id);
      expect(imp.data.imported, JSON.stringify(imp.data)).toBe(mine.length);
      expect(imp.data.response_ids).toHaveLength(mine.length);
      expect(imp.data.imported + imp.data.skipped).toBe(n);
    }
    expect(log.imports.map((i) => i.data.imported).sort((x, y) => x - y)).toEqual(reported.map((r) => r.imported).sort((x, y) => x - y));
    await caughtUp(two.a, ['answers', 'activity']);
    const db = two.a.rt.database.db;
    expect(Number((await db('rm_responses').where('website_id', site.id).count<{ n: string }[]>('* as n'))[0].n)).toBe(n);
    // the audit trail: one feed entry per call, listing exactly the answers it brought in (n <= 100: listed by id)
    const feed: { entity_ids: string[] }[] = await db('rm_activity')
      .where({ website_id: site.id, entity_type: 'response', change_type: 'imported' })
      .select('entity_ids');
    expect(feed).toHaveLength(reported.length);
    expect(feed.flatMap((f) => f.entity_ids).sort()).toEqual((await db('rm_responses').where('website_id', site.id).pluck('id')).sort());
  };

  it(`given one file imported ${N} times at once over two instances, then the imported counts add up to the answers stored, and the log and the feed agree`, async () => {
    const { a, b, key } = two;
    const site = await buildSite(a, key, { attributes: [{ name: 'Price' }] });
    const body = { website_id: site.id, responses: items(site, 'http', 90) };
    const rs = await Promise.all(Array.from({ length: N }, (_, i) => call(i % 2 ? b : a, 'POST', '/api/v1/responses/import', { key, body })));
    for (const r of rs) expect(r.status, JSON.stringify(r.body)).toBe(201);
    // every call names the same answer for each item, whoever stored it
    for (const r of rs) expect(r.body.response_ids).toEqual(rs[0].body.response_ids);
    await expectHonest(
      site,
      90,
      rs.map((r) => r.body),
    );
  }, 60_000);

  it('given one file imported by two CLI processes and an HTTP call at once, then each reports what it stored', async () => {
    const { a, b, key } = two;
    const site = await buildSite(a, key, { attributes: [{ name: 'Price' }] });
    const lines = items(site, 'cli', 80);
    const file = join(dir, 'answers.jsonl');
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
    const [c1, c2, h] = await Promise.all([
      cli(a.databaseUrl!, ['responses:import', '--website', site.id, file]),
      cli(a.databaseUrl!, ['responses:import', '--website', site.id, file]),
      call(b, 'POST', '/api/v1/responses/import', { key, body: { website_id: site.id, responses: lines } }),
    ]);
    expect(c1.status, c1.stderr).toBe(0);
    expect(c2.status, c2.stderr).toBe(0);
    expect(h.status, JSON.stringify(h.body)).toBe(201);
    const outs = [c1, c2].map((c) => JSON.parse(c.stdout) as { imported: number; skipped: number });
    // the progress line says the same as the JSON
    for (const [i, c] of [c1, c2].entries()) expect(c.stderr).toContain(`${outs[i].imported} imported, ${outs[i].skipped} skipped`);
    await expectHonest(site, 80, [...outs, h.body]);
  }, 120_000);
});

describe.skipIf(!onRealPostgres)('a CLI waiting on a dead lease holder', () => {
  let s: TestServer;
  let holder: ChildProcess | null = null;
  let dir: string;
  beforeAll(async () => {
    s = await startServer();
    dir = mkdtempSync(join(tmpdir(), 'aivis-lease-'));
  });
  afterAll(async () => {
    holder?.kill('SIGKILL');
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('given the server that holds the projection leases killed (its leases not renewed), then a CLI rebuild finishes and a CLI import takes the lease over, each within 20 s', async () => {
    const key = (await s.org('Lease')).key;
    const site = await buildSite(s, key, { attributes: [{ name: 'Price' }] });
    const file = join(dir, 'answers.jsonl');
    writeFileSync(
      file,
      items(site, 'lease', 50)
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    // this process's instance steps back; a server in a child process takes every lease
    for (const r of s.rt.runners.values()) await r.stop();
    // its leases last 5 s, not 15 (renewed every 5/3 s): the CLI waits that long for the answers lease to lapse
    const env: Record<string, string> = { ...(process.env as Record<string, string>), DATABASE_URL: s.databaseUrl!, PROJECTION_LEASE_S: '5' };
    delete env.NATS_URL;
    holder = spawn(process.execPath, nodeArgs('test/support/server-child.ts'), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const db = s.rt.database.db;
    await until(
      'the child to hold the answers lease',
      async () => {
        const row = await db('aivis_checkpoints').where('name', 'answers').first('lease_owner', 'lease_until');
        return Boolean(row?.lease_owner && new Date(row.lease_until).getTime() > Date.now() + 2_500);
      },
      60_000,
    );
    const leaseUntil = new Date((await db('aivis_checkpoints').where('name', 'answers').first('lease_until')).lease_until);
    holder.kill('SIGKILL');
    await new Promise((r) => holder!.once('exit', r));
    holder = null;
    // the lease is still held, for a while yet: nobody renews it
    expect(leaseUntil.getTime()).toBeGreaterThan(Date.now());

    // a rebuild needs no lease (it builds beside the live table and swaps), so it does not wait for the dead server
    const rebuild = await cli(s.databaseUrl!, ['projections:rebuild', 'answers']);
    expect(rebuild.status, rebuild.stderr).toBe(0);
    expect(rebuild.ms).toBeLessThan(20_000);
    // the import's answers come after the rebuild's checkpoint: only the leader's lease lets the CLI apply them
    const imp = await cli(s.databaseUrl!, ['responses:import', '--website', site.id, file]);
    expect(imp.status, imp.stderr).toBe(0);
    expect(JSON.parse(imp.stdout)).toEqual({ imported: 50, skipped: 0, batches: 1 });
    expect(imp.ms).toBeLessThan(20_000);
    // it took the lease over once it lapsed, and gave it back
    expect(Date.now()).toBeGreaterThan(leaseUntil.getTime());
    expect((await db('aivis_checkpoints').where('name', 'answers').first('lease_owner')).lease_owner).toBeNull();
    expect(Number((await db('rm_responses').where('website_id', site.id).count<{ n: string }[]>('* as n'))[0].n)).toBe(50);
  }, 120_000);
});

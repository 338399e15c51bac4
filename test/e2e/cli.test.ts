import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { freshDatabase, type TestDatabase } from '../support/db';
import { loadConfig } from '../../src/config';
import { buildApp } from '../../src/http/app';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { silentLogger } from '../../src/logger';
import { LABEL_BIDI, TEXT_NUL } from '../../src/domain/schemas';
import { openRuntime } from '../../src/runtime';
import { cliHost } from '../support/cli';
import { answerFromYearZero } from '../support/events';
import { nodeArgs } from '../support/bundles';

// The operator CLI as an operator runs it: against the real server when DATABASE_URL is set, else embedded.
describe('operator CLI', () => {
  let db: TestDatabase | null = null;
  let dataDir = '';
  const env = () => {
    const e: Record<string, string> = { ...(process.env as Record<string, string>), LOG_LEVEL: 'warn' };
    delete e.NATS_URL;
    if (db?.url) e.DATABASE_URL = db.url;
    else {
      delete e.DATABASE_URL;
      e.DATA_DIR = dataDir;
    }
    return e;
  };
  /** A website with one prompt, made through the HTTP API of a server on the same store (stopped afterwards). */
  const seedSite = async (key: string) => {
    const rt = await openRuntime(loadConfig({ ...env(), LOG_LEVEL: 'silent', SCHEDULER: 'off' }), silentLogger());
    try {
      await rt.startProjections();
      // the key was made by the CLI, another process: this instance knows it once its read models have caught up
      expect(await rt.waitForReadModels(await rt.store.lastPosition(), 'all', 10_000)).toBe(true);
      const { app, close } = await buildApp(rt);
      try {
        const post = async (url: string, payload: unknown) => {
          const r = await app.inject({ method: 'POST', url, headers: { 'x-api-key': key }, payload: payload as object });
          expect(r.statusCode, r.body).toBe(201);
          return r.json();
        };
        const website = (await post('/api/v1/websites', { name: 'Acme', url: 'https://acme-cli.example.com' })).website.id as string;
        const prompt = (await post('/api/v1/prompts', { website_id: website, text: 'Best CRM?' })).prompt.id as string;
        return { website, prompt };
      } finally {
        await close();
      }
    } finally {
      await rt.close();
    }
  };
  /**
   * a CLI process of its own: this run's bundle of `src/cli.ts` (test/support/bundles.ts), or `node --import tsx
   * src/cli.ts ...args` (`npm run cli`) when `tsx` is set
   */
  const spawned = (args: string[], tsx = false) =>
    spawnSync(process.execPath, [...(tsx ? ['--import', 'tsx', 'src/cli.ts'] : nodeArgs('src/cli.ts')), ...args], {
      env: env(),
      encoding: 'utf8',
      timeout: 120_000,
    });
  // the other runs go through one host process that evaluates src/cli.ts afresh for each (same argv, environment,
  // stdout, stderr and exit code) without loading the module graph every time: see test/support/cli-host.ts
  const host = cliHost();
  const cli = (...args: string[]) => host.run(args, env());

  beforeAll(async () => {
    if (process.env.DATABASE_URL) db = await freshDatabase(10, { serverSchema: true });
    else dataDir = mkdtempSync(join(tmpdir(), 'aivis-cli-'));
    // the host loads the CLI's modules once, here (the usage, exit 2), rather than inside the first test that uses it
    expect((await cli()).status).toBe(2);
  });
  afterAll(async () => {
    await host.close();
    await db?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('given org:create, then it prints the organization, its owner and a global key as JSON', async () => {
    const r = spawned(['org:create', '--name', 'Cli Org', '--plan', 'pro', '--features', 'pitch,shopping', '--pitch-allowance', '3']);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toEqual({
      organization_id: expect.any(String),
      owner_user_id: expect.any(String),
      api_key: expect.stringMatching(/^aivis_[0-9A-Za-z]{40}$/),
    });
    const users = await cli('users:list', '--org', out.organization_id);
    expect(users.status, users.stderr).toBe(0);
    expect(JSON.parse(users.stdout).members).toMatchObject([{ user_id: out.owner_user_id, role: 'owner', access_type: 'organization' }]);
    expect((await cli('users:list', '--org', '6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f')).status).toBe(1);
    // a CLI process of its own (about 2 s of CPU loading its modules) and two runs in the host: 29 s at load 21 before
    // the host, against the 30 s default
  }, 120_000);

  it('given bad arguments, then exit 1 with one line on stderr', async () => {
    const first = ['org:create'];
    for (const args of [
      first,
      ['org:create', '--name', 'X', '--plan', 'gold'],
      ['org:create', '--name', 'X', '--features', 'teleport'],
      ['projections:rebuild', 'nope'],
    ]) {
      // the first in a CLI process of its own, the others in the host
      const r = args === first ? spawned(args) : await cli(...args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(
        r.stderr
          .trim()
          .split('\n')
          .filter((l) => !l.startsWith('npm warn')),
      ).toHaveLength(1);
    }
    // as `npm run cli` runs it: through tsx
    expect(spawned(['no-such-command'], true).status).toBe(2);
    // two CLI processes and three runs in the host opening the store: 48 s in a full run at load ~20 when all five
    // were processes
  }, 120_000);

  it('given responses:import with a JSONL file, then the answers are imported with progress on stderr, and a re-run skips them', async () => {
    const org = JSON.parse((await cli('org:create', '--name', 'Importer')).stdout);
    const file = join(tmpdir(), `aivis-import-${process.pid}.jsonl`);
    const site = await seedSite(org.api_key);
    const lines = Array.from({ length: 1500 }, (_, i) =>
      JSON.stringify({
        external_id: `e${i}`,
        prompt_id: site.prompt,
        model: 'chatgpt',
        run_at: '2026-03-01T10:00:00Z',
        text: `Answer ${i} about Acme.`,
      }),
    );
    writeFileSync(file, `${lines.join('\n')}\n`);
    try {
      const r = await cli('responses:import', '--website', site.website, file);
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ imported: 1500, skipped: 0, batches: 2 });
      expect(r.stderr).toContain('importing: 1000/1500');
      expect(r.stderr).toContain('importing: 1500 imported, 0 skipped');
      const again = await cli('responses:import', '--website', site.website, file);
      expect(JSON.parse(again.stdout)).toEqual({ imported: 0, skipped: 1500, batches: 2 });
      writeFileSync(file, `${lines[0]}\n{"prompt_id": "${site.prompt}", "model": "nope", "run_at": "2026-03-01T10:00:00Z", "text": "x"}\n`);
      const bad = await cli('responses:import', '--website', site.website, file);
      expect(bad.status).toBe(1);
      expect(
        bad.stderr
          .trim()
          .split('\n')
          .filter((l) => !l.startsWith('npm warn'))
          .pop(),
      ).toMatch(/^error: line 2: model: unknown model "nope"/);
    } finally {
      rmSync(file, { force: true });
    }
    // four runs in the host and a runtime, 1,500 answers imported then skipped: 86 s in a full run at load ~20 when the
    // runs were processes
  }, 180_000);

  it('given text or files the HTTP API would refuse, then the CLI refuses them the same way, naming the argument or line', async () => {
    const lastLine = (r: { stderr: string }) =>
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('npm warn'))
        .pop();
    const named = await cli('org:create', '--name', 'Acme\u202eevil');
    expect(named.status).toBe(1);
    expect(lastLine(named)).toBe(`error: name: ${LABEL_BIDI}`);
    const org = JSON.parse((await cli('org:create', '--name', 'Careful importer')).stdout);
    const site = await seedSite(org.api_key);
    expect(lastLine(await cli('responses:import', '--website', 'not-a-uuid', 'x.jsonl'))).toBe('error: --website: must be a UUID');
    const file = join(tmpdir(), `aivis-import-bad-${process.pid}.jsonl`);
    const item = (text: string) => JSON.stringify({ prompt_id: site.prompt, model: 'chatgpt', run_at: '2026-03-01T10:00:00Z', text });
    try {
      writeFileSync(file, Buffer.concat([Buffer.from(`${item('fine')}\n{"text":"caf`), Buffer.from([0xe9]), Buffer.from('"}\n')]));
      expect(lastLine(await cli('responses:import', '--website', site.website, file))).toBe(`error: ${file}:2: must be valid UTF-8`);
      writeFileSync(file, `${'['.repeat(40)}${']'.repeat(40)}\n`);
      expect(lastLine(await cli('responses:import', '--website', site.website, file))).toBe(
        `error: ${file}:1: must be nested at most 32 levels deep`,
      );
      writeFileSync(file, `${item('fine')}\n${item('a\u0000b')}\n`);
      const nul = await cli('responses:import', '--website', site.website, file);
      expect(nul.status).toBe(1);
      expect(lastLine(nul)).toBe(`error: line 2: text: ${TEXT_NUL}`);
    } finally {
      rmSync(file, { force: true });
    }
    // six runs, each opening the store: on a loaded machine (embedded PGlite above all) that is minutes
  }, 180_000);

  it('given an answer the answers read model cannot hold, then projections:rebuild answers swaps in everything else and names it, and projections:retry tries it again', async () => {
    const org = JSON.parse((await cli('org:create', '--name', 'Poisoned')).stdout);
    const site = await seedSite(org.api_key);
    const file = join(tmpdir(), `aivis-poison-${process.pid}.jsonl`);
    writeFileSync(file, `${JSON.stringify({ prompt_id: site.prompt, model: 'chatgpt', run_at: '2026-03-01T10:00:00Z', text: 'Acme is fine.' })}\n`);
    try {
      expect((await cli('responses:import', '--website', site.website, file)).status).toBe(0);
    } finally {
      rmSync(file, { force: true });
    }
    // an answer from year 0 (UTC), appended around the import's check
    const rt = await openRuntime(loadConfig({ ...env(), LOG_LEVEL: 'silent', SCHEDULER: 'off' }), silentLogger(), { withoutBus: true });
    let answers = 0;
    try {
      const data = answerFromYearZero({ response_id: randomUUID(), website_id: site.website, prompt_id: site.prompt }, 'Old.');
      const metadata = {
        organization_id: org.organization_id,
        website_id: site.website,
        actor: SYSTEM_ACTOR,
        correlation_id: randomUUID(),
        causation_id: null,
        time: new Date().toISOString(),
      };
      await rt.store.append(`import-${randomUUID()}`, [{ id: randomUUID(), type: 'ResponseRecorded', data, metadata }], 'no_stream');
      answers = Number((await rt.database.db('rm_responses').count<{ n: string }[]>('* as n'))[0].n);
    } finally {
      await rt.close();
    }
    const r = await cli('projections:rebuild', 'answers');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).rebuilt.answers).toMatchObject({ set_aside: 1 });
    expect(r.stderr).toContain('1 website(s) set aside');
    const again = await cli('projections:retry', 'answers', '--website', site.website);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ answers: { retried: 1, applied: 0, set_aside: 1 } });
    const check = await openRuntime(loadConfig({ ...env(), LOG_LEVEL: 'silent', SCHEDULER: 'off' }), silentLogger(), { withoutBus: true });
    try {
      // every answer the read model could hold is there, as before the rebuild
      expect(Number((await check.database.db('rm_responses').count<{ n: string }[]>('* as n'))[0].n)).toBe(answers);
    } finally {
      await check.close();
    }
    // four runs and three runtimes: minutes on a loaded machine, embedded
  }, 180_000);

  it('given projections:rebuild, then every read model is rebuilt from the log with progress on stderr', async () => {
    await cli('org:create', '--name', 'Second');
    const r = await cli('projections:rebuild');
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.rebuilt.organizations.events).toBeGreaterThanOrEqual(6);
    expect(Object.keys(out.rebuilt)).toEqual(expect.arrayContaining(['organizations', 'websites', 'activity']));
    expect(r.stderr).toContain('rebuilding organizations');
    const one = await cli('projections:rebuild', 'websites');
    expect(Object.keys(JSON.parse(one.stdout).rebuilt)).toEqual(['websites']);
    // three runs, two rebuilding from the log
  }, 120_000);
});

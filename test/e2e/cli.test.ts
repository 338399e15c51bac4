import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/db';

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
  const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env: env(), encoding: 'utf8', timeout: 120_000 });

  beforeAll(async () => {
    if (process.env.DATABASE_URL) db = await freshDatabase();
    else dataDir = mkdtempSync(join(tmpdir(), 'aivis-cli-'));
  });
  afterAll(async () => {
    await db?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('given org:create, then it prints the organization, its owner and a global key as JSON', () => {
    const r = cli('org:create', '--name', 'Cli Org', '--plan', 'pro', '--features', 'pitch,shopping', '--pitch-allowance', '3');
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toEqual({ organization_id: expect.any(String), owner_user_id: expect.any(String), api_key: expect.stringMatching(/^aivis_[0-9A-Za-z]{40}$/) });
  });

  it('given bad arguments, then exit 1 with one line on stderr', () => {
    for (const args of [['org:create'], ['org:create', '--name', 'X', '--plan', 'gold'], ['org:create', '--name', 'X', '--features', 'teleport'], ['projections:rebuild', 'nope']]) {
      const r = cli(...args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.stderr.trim().split('\n').filter((l) => !l.startsWith('npm warn'))).toHaveLength(1);
    }
    expect(cli('no-such-command').status).toBe(2);
  });

  it('given projections:rebuild, then every read model is rebuilt from the log with progress on stderr', () => {
    cli('org:create', '--name', 'Second');
    const r = cli('projections:rebuild');
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.rebuilt.organizations.events).toBeGreaterThanOrEqual(6);
    expect(Object.keys(out.rebuilt)).toEqual(expect.arrayContaining(['organizations', 'websites', 'activity']));
    expect(r.stderr).toContain('rebuilding organizations');
    const one = cli('projections:rebuild', 'websites');
    expect(Object.keys(JSON.parse(one.stdout).rebuilt)).toEqual(['websites']);
  });
});

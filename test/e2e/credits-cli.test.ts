import { describe, expect, it } from 'vitest';
import { createOrganization } from '../../commands/organizations/create-organization';
import { newId } from '../../src/domain/ids';
import { hostedCli } from '../support/cli';
import { freshDatabase, onRealPostgres } from '../support/db';
import { openJobRuntime } from '../support/jobs';

// The operator's grant of one-off credits: printed with the organization's balance, refused for an unknown organization.
(onRealPostgres ? describe : describe.skip)('npm run cli -- credits:grant', () => {
  it('given an organization, when credits are granted twice, then each prints the grant and the one-off balance; an unknown organization or a bad amount is refused with one line', async () => {
    const database = await freshDatabase();
    const rt = await openJobRuntime({ ...database, close: async () => {} }, { specs: [], workers: false });
    let org = '';
    try {
      const r = await createOrganization(rt.store, { name: 'Granted', plan: 'free', features: [], pitch_allowance: 0 });
      if ('kind' in r) throw new Error(r.message);
      org = r.result.organization_id;
    } finally {
      await rt.close();
    }
    // the three runs through one CLI host process (the module graph loaded once)
    const host = hostedCli(database.url!);
    const cli = host.run;
    const first = await cli('credits:grant', '--org', org, '--credits', '250', '--reason', 'pilot');
    expect(first.status, first.stderr).toBe(0);
    const out = JSON.parse(first.stdout);
    expect(out).toMatchObject({ organization_id: org, credits: 250, one_off_balance: 250 });
    expect(out.grant_id).toMatch(/^[0-9a-f-]{36}$/);

    const unknown = await cli('credits:grant', '--org', newId(), '--credits', '10');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr.trim()).toMatch(/^error: organization [0-9a-f-]{36}: Organization not found$/);
    const bad = await cli('credits:grant', '--org', org, '--credits=0');
    expect(bad.status).toBe(1);
    expect(bad.stderr.trim()).toBe('error: --credits: must be above 0');
    await host.close();
    await database.close();
  }, 180_000);
});

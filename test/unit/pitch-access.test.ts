import { describe, expect, it } from 'vitest';
import { createPitch, getPitch, listPitches, pitchUsage } from '../../src/app/pitches';
import type { AppDeps } from '../../src/app/context';
import { DomainErrorException } from '../../src/domain/errors';
import { ADMIN_PERMISSIONS, type Principal, VIEWER_PERMISSIONS } from '../../src/domain/principal';

/** Who may reach pitch reports is decided before anything is read: these callers have no dependencies at all. */
const caller = (p: Partial<Principal>) => ({
  deps: {} as AppDeps,
  principal: {
    organizationId: 'o',
    apiKeyId: null,
    userId: 'u',
    websiteIds: null,
    partner: false,
    plan: 'enterprise',
    features: ['pitch'],
    ...p,
  } as Principal,
});
const refusal = async (run: Promise<unknown>) => {
  try {
    await run;
  } catch (err) {
    return err instanceof DomainErrorException ? [err.error.kind, err.error.message] : String(err);
  }
  return 'allowed';
};
const body = { website_url: 'acme.com', country: 'United States', language: 'English' };

describe('who may reach pitch reports', () => {
  it('given a key scoped to websites, then every pitch operation is 403 Forbidden: global API key required', async () => {
    const c = caller({ kind: 'api_key', apiKeyId: 'k', websiteIds: ['w'] });
    for (const run of [createPitch(c, body, 'k1'), getPitch(c, 'x'), listPitches(c, { page_num: 0, page_size: 10 }), pitchUsage(c)]) {
      expect(await refusal(run)).toEqual(['forbidden', 'Forbidden: global API key required']);
    }
  });

  it('given a signed-in user, then reading needs organization view and creating organization manage', async () => {
    const viewer = caller({ kind: 'user', permissions: VIEWER_PERMISSIONS });
    expect(await refusal(createPitch(viewer, body, 'k1'))).toEqual(['forbidden', 'Forbidden: insufficient permissions']);
    const admin = caller({ kind: 'user', permissions: ADMIN_PERMISSIONS, features: [] });
    // past the access check, the feature gate answers
    expect(await refusal(createPitch(admin, body, 'k1'))).toEqual(['forbidden', 'Pitch reports are not enabled for this organization']);
    expect(await refusal(getPitch(viewer, 'not-a-uuid'))).toEqual(['invalid', 'Invalid pitch ID format']);
  });
});

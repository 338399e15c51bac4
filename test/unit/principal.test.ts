import { describe, expect, it } from 'vitest';
import { DomainErrorException } from '../../src/domain/errors';
import {
  ADMIN_PERMISSIONS,
  authorize,
  can,
  GLOBAL_KEY_REQUIRED,
  PERMISSION_DENIED,
  type Principal,
  requireGlobal,
  VIEWER_PERMISSIONS,
  WEBSITE_FORBIDDEN,
} from '../../src/domain/principal';

const key = (websiteIds: string[] | null): Principal => ({
  organizationId: 'o',
  apiKeyId: 'k',
  userId: null,
  websiteIds,
  partner: false,
  plan: 'enterprise',
  features: [],
});
const user = (websiteIds: string[] | null, permissions = VIEWER_PERMISSIONS): Principal => ({
  ...key(websiteIds),
  kind: 'user',
  apiKeyId: null,
  userId: 'u',
  permissions: { ...permissions },
});
const refusal = (f: () => void) => {
  try {
    f();
    return null;
  } catch (e) {
    return e instanceof DomainErrorException ? e.error.message : String(e);
  }
};

describe('authorize', () => {
  it('given an API key, then it may do anything on the websites of its scope and nothing outside', () => {
    expect(can(key(null), { category: 'prompts', level: 'manage' }, 'w1')).toBe(true);
    expect(can(key(['w1']), { category: 'team', level: 'manage' }, 'w1')).toBe(true);
    expect(refusal(() => authorize(key(['w1']), { category: 'prompts', level: 'view' }, 'w2'))).toBe(WEBSITE_FORBIDDEN);
  });

  it("given a signed-in viewer, then it lists but cannot edit, and the refusal says it is the role's", () => {
    const viewer = user(null);
    expect(refusal(() => authorize(viewer, { category: 'prompts', level: 'view' }, 'w1'))).toBeNull();
    expect(refusal(() => authorize(viewer, { category: 'prompts', level: 'edit' }, 'w1'))).toBe(PERMISSION_DENIED);
  });

  it('given a custom role with none in a category, then even viewing it is refused; levels are ordered none < view < edit < manage', () => {
    const custom = user(['w1'], { ...ADMIN_PERMISSIONS, billing: 'none', content: 'edit' });
    expect(can(custom, { category: 'billing', level: 'view' })).toBe(false);
    expect(can(custom, { category: 'content', level: 'view' }, 'w1')).toBe(true);
    expect(can(custom, { category: 'content', level: 'edit' }, 'w1')).toBe(true);
    expect(can(custom, { category: 'content', level: 'manage' }, 'w1')).toBe(false);
    expect(can(custom, { category: 'content', level: 'view' }, 'w2')).toBe(false);
  });

  it('given a scoped key, then a global-only operation is refused with the spec message', () => {
    expect(refusal(() => requireGlobal(key(['w1'])))).toBe(GLOBAL_KEY_REQUIRED);
    expect(refusal(() => requireGlobal(key(null)))).toBeNull();
  });
});

import type { Aggregate } from '../handle';
import type { DomainEvent, Feature } from '../../src/domain/events';

export interface WebsiteState {
  id: string;
  name: string;
  url: string;
  normalized_url: string;
  status: 'active' | 'paused' | 'deleted';
  external_id: string | null;
}

export interface ApiKeyState {
  id: string;
  name: string;
  user_id: string | null;
  website_ids: string[] | null;
  partner: boolean;
  revoked: boolean;
}

/** The organization stream `org-<id>`: the organization, its people, its keys and its websites. */
export interface OrganizationState {
  id: string | null;
  name: string;
  plan: 'free' | 'pro' | 'enterprise';
  features: Feature[];
  pitch_allowance: number;
  users: Map<string, { email: string; role: 'owner' | 'admin' | 'viewer' }>;
  keys: Map<string, ApiKeyState>;
  websites: Map<string, WebsiteState>;
}

export const organizationStream = (organizationId: string) => `org-${organizationId}`;

const copyMap = <K, V extends object>(m: Map<K, V>) => new Map([...m].map(([k, v]) => [k, { ...v }] as [K, V]));

export const Organization: Aggregate<OrganizationState> = {
  initial: () => ({ id: null, name: '', plan: 'free', features: [], pitch_allowance: 0, users: new Map(), keys: new Map(), websites: new Map() }),
  // evolve updates entries in place: work on copies so a cached state shared by concurrent requests stays intact
  clone: (s) => ({ ...s, users: copyMap(s.users), keys: copyMap(s.keys), websites: copyMap(s.websites) }),
  evolve(s, e: DomainEvent) {
    switch (e.type) {
      case 'OrganizationCreated':
        return { ...s, id: e.data.organization_id, name: e.data.name, plan: e.data.plan, features: e.data.features, pitch_allowance: e.data.pitch_allowance };
      case 'UserAdded':
        s.users.set(e.data.user_id, { email: e.data.email, role: e.data.role });
        return s;
      case 'ApiKeyCreated':
        s.keys.set(e.data.api_key_id, {
          id: e.data.api_key_id,
          name: e.data.name,
          user_id: e.data.user_id,
          website_ids: e.data.website_ids,
          partner: e.data.partner,
          revoked: false,
        });
        return s;
      case 'ApiKeyRevoked': {
        const k = s.keys.get(e.data.api_key_id);
        if (k) k.revoked = true;
        return s;
      }
      case 'WebsiteCreated':
        s.websites.set(e.data.website_id, {
          id: e.data.website_id,
          name: e.data.name,
          url: e.data.url,
          normalized_url: e.data.normalized_url,
          status: 'active',
          external_id: e.data.external_id,
        });
        return s;
      case 'WebsiteExternalIdSet': {
        const w = s.websites.get(e.data.website_id);
        if (w) w.external_id = e.data.external_id;
        return s;
      }
      case 'WebsiteStatusChanged': {
        const w = s.websites.get(e.data.website_id);
        if (w) w.status = e.data.status;
        return s;
      }
      default:
        return s;
    }
  },
};

import { type Aggregate, mapWriter } from '../handle';
import { type EventsOf, exhaustive, type Feature, TEAM_EVENT_TYPES, organizationEvents } from '../../src/domain/events';
import { eventTypeList, typesOf } from '../../src/domain/event-lists';
import { emptyTeam, foldTeam, isTeamEvent, ownTeam, type TeamState } from '../team/team';

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
  /** roles, members, groups and invites (commands/team) */
  team: TeamState;
}

export const organizationStream = (organizationId: string) => `org-${organizationId}`;

/** The events of an organization stream: its own, its team's (commands/team), and two no rule reads. */
export const ORGANIZATION_EVENT_TYPES = eventTypeList(...typesOf(organizationEvents), ...TEAM_EVENT_TYPES, 'CreditsGranted');
export type OrganizationEvent = EventsOf<typeof ORGANIZATION_EVENT_TYPES>;

/**
 * Folds one event into the organization. `owned`: the state is load's own copy and its maps are changed in place;
 * otherwise the maps the event touches are copied into a new state and `s` is left as it was. Entries are never
 * changed in place either way: a change replaces the entry.
 */
function fold(s: OrganizationState, e: OrganizationEvent, owned: boolean): OrganizationState {
  const m = mapWriter(s, owned);
  const write = m.write;
  if (isTeamEvent(e)) {
    const team = foldTeam(s.team, e, owned);
    if (team !== s.team) m.state = owned ? Object.assign(s, { team }) : { ...s, team };
  }
  switch (e.type) {
    case 'OrganizationCreated': {
      const { organization_id: id, name, plan, features, pitch_allowance } = e.data;
      if (owned) return Object.assign(s, { id, name, plan, features, pitch_allowance });
      return { ...s, id, name, plan, features, pitch_allowance };
    }
    case 'UserAdded':
      write('users').set(e.data.user_id, { email: e.data.email, role: e.data.role });
      break;
    case 'ApiKeyCreated':
      write('keys').set(e.data.api_key_id, {
        id: e.data.api_key_id,
        name: e.data.name,
        user_id: e.data.user_id,
        website_ids: e.data.website_ids,
        partner: e.data.partner,
        revoked: false,
      });
      break;
    case 'ApiKeyRevoked': {
      const k = s.keys.get(e.data.api_key_id);
      if (k) write('keys').set(k.id, { ...k, revoked: true });
      break;
    }
    case 'WebsiteCreated': {
      // the website as created, under its id, active
      const { website_id, ...website } = e.data;
      write('websites').set(website_id, { id: website_id, ...website, status: 'active' });
      break;
    }
    case 'WebsiteExternalIdSet': {
      const w = s.websites.get(e.data.website_id);
      if (w) write('websites').set(w.id, { ...w, external_id: e.data.external_id });
      break;
    }
    case 'WebsiteStatusChanged': {
      const w = s.websites.get(e.data.website_id);
      if (w) write('websites').set(w.id, { ...w, status: e.data.status });
      break;
    }
    // for the read models (sign-in, credits): no rule of this state reads them
    case 'UserPasswordSet':
    case 'CreditsGranted':
      break;
    default:
      // the team's events were folded above
      if (!isTeamEvent(e)) return exhaustive(e, m.state);
  }
  return m.state;
}

export const Organization: Aggregate<OrganizationState, OrganizationEvent> = {
  types: ORGANIZATION_EVENT_TYPES,
  initial: () => ({
    id: null,
    name: '',
    plan: 'free',
    features: [],
    pitch_allowance: 0,
    users: new Map(),
    keys: new Map(),
    websites: new Map(),
    team: emptyTeam(),
  }),
  /** copies only the maps the event touches */
  evolve: (s, e) => fold(s, e, false),
  replay: {
    own: (s) => ({ ...s, users: new Map(s.users), keys: new Map(s.keys), websites: new Map(s.websites), team: ownTeam(s.team) }),
    apply: (s, e) => fold(s, e, true),
  },
};

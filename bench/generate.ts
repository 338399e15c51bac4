import { type EventMetadata, SYSTEM_ACTOR } from '../src/domain/events';
import { comparePositions, type EventStore, type NewEvent, type Position, START } from '../src/eventstore/port';
import { info, nowNs, secondsSince, sleep } from './lib';
import { seededRandom } from '../src/domain/random';

/** Deterministic PRNG: the same seed writes the same data. */
export const rng = seededRandom;

/** Metadata of events the system writes now for a website, the correlation id drawn from `r`. */
export const systemMetadata = (organizationId: string, websiteId: string, r: () => number): EventMetadata => ({
  organization_id: organizationId,
  website_id: websiteId,
  actor: SYSTEM_ACTOR,
  correlation_id: seededUuid(r),
  causation_id: null,
  time: new Date().toISOString(),
});

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A UUID (v4 layout) from the seeded PRNG: deterministic like the rest of the data, and cheap. */
export function seededUuid(r: () => number): string {
  const b: number[] = [];
  for (let i = 0; i < 4; i++) {
    const x = Math.floor(r() * 4294967296);
    b.push(x >>> 24, (x >>> 16) & 255, (x >>> 8) & 255, x & 255);
  }
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.map((x) => HEX[x]);
  return `${h[0]}${h[1]}${h[2]}${h[3]}-${h[4]}${h[5]}-${h[6]}${h[7]}-${h[8]}${h[9]}-${h[10]}${h[11]}${h[12]}${h[13]}${h[14]}${h[15]}`;
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

const SUBJECTS = [
  'project management software',
  'CRM for startups',
  'running shoes',
  'password manager',
  'email marketing tool',
  'standing desk',
  'accounting software',
  'VPN',
];
const FRAMES = [
  'best {} for small teams',
  'is {} worth it in 2025',
  'cheapest {} with good support',
  '{} alternatives',
  'which {} do experts recommend',
  'compare the top {}',
  'how to choose a {}',
];
const TOPICS = ['Pricing', 'Integrations', 'Support', 'Security', 'Alternatives', 'Reviews', 'Onboarding', 'Performance'];
const BRANDS = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Wonka', 'Tyrell', 'Cyberdyne'];
const TAGS = ['funnel:top', 'funnel:mid', 'funnel:bottom', 'region:eu', 'region:us', 'q3-campaign', 'brand'];

/** One website's catalogue stream and who writes to it. */
export interface Site {
  organizationId: string;
  websiteId: string;
  apiKeyId: string;
  userId: string;
  topicIds: string[];
  competitors: number;
  revision: bigint;
}

export function makeSites(seed: number, orgs: number, sitesPerOrg: number): Site[] {
  const r = rng(seed ^ 0x5eed);
  const sites: Site[] = [];
  for (let o = 0; o < orgs; o++) {
    const organizationId = seededUuid(r);
    const apiKeyId = seededUuid(r);
    const userId = seededUuid(r);
    for (let w = 0; w < sitesPerOrg; w++) {
      sites.push({ organizationId, websiteId: seededUuid(r), apiKeyId, userId, topicIds: [], competitors: 0, revision: -1n });
    }
  }
  return sites;
}

const YEAR_MS = 365 * 24 * 3600 * 1000;
const T0 = Date.parse('2025-01-01T00:00:00Z');

/**
 * The next event of a site's catalogue: a topic, a competitor or (mostly) a prompt, each of a type the activity feed
 * maps, with catalogue-valid data and metadata like a command writes (api key or user actor, correlation id, time).
 */
export function catalogEvent(r: () => number, site: Site, seq: number, fraction: number): NewEvent {
  const id = seededUuid(r);
  const x = r();
  const viaKey = r() < 0.7;
  const metadata: EventMetadata = {
    organization_id: site.organizationId,
    website_id: site.websiteId,
    actor: viaKey ? { kind: 'api_key', user_id: null, api_key_id: site.apiKeyId } : { kind: 'user', user_id: site.userId, api_key_id: null },
    correlation_id: seededUuid(r),
    causation_id: null,
    time: new Date(T0 + Math.floor(fraction * YEAR_MS)).toISOString(),
  };
  if (site.topicIds.length === 0 || (x < 0.08 && site.topicIds.length < 40)) {
    const topic_id = seededUuid(r);
    site.topicIds.push(topic_id);
    return { id, type: 'TopicCreated', data: { topic_id, name: `${pick(r, TOPICS)} ${site.topicIds.length}` }, metadata };
  }
  if (x < 0.12 && site.competitors < 25) {
    site.competitors++;
    const brand = `${pick(r, BRANDS)}${site.competitors}`;
    return {
      id,
      type: 'CompetitorAdded',
      data: {
        competitor_id: seededUuid(r),
        name: brand,
        url: `https://www.${brand.toLowerCase()}.com/`,
        normalized_url: `${brand.toLowerCase()}.com`,
        identifiers: [brand, brand.toLowerCase(), `${brand} Inc.`],
      },
      metadata,
    };
  }
  const tags = TAGS.filter(() => r() < 0.2);
  return {
    id,
    type: 'PromptCreated',
    data: {
      prompt_id: seededUuid(r),
      text: `${pick(r, FRAMES).replace('{}', pick(r, SUBJECTS))} (${seq})`,
      topic_id: r() < 0.85 ? pick(r, site.topicIds) : null,
      type: r() < 0.3 ? 'branded' : 'non_branded',
      status: r() < 0.9 ? 'active' : 'paused',
      tags,
    },
    metadata,
  };
}

export interface Generated {
  events: number;
  seconds: number;
  sites: Site[];
  method: string;
  /** position of the last event written */
  last: Position;
}

/**
 * Writes `total` catalogue events through the event store's own append (one stream per website, `batch` events per
 * append with the expected revision, `concurrency` writers), deterministically from the seed. Measured against a
 * set-based INSERT … SELECT unnest(arrays) straight into aivis_events, the store's append in 1000-event batches was
 * faster (≈16k vs ≈10k events/s on a busy 2-vCPU box: one JSON parameter is cheaper to send than escaped arrays), so
 * the data goes in through the real path.
 */
export async function generateCatalog(
  store: EventStore,
  total: number,
  opts: { seed?: number; batch?: number; concurrency?: number; orgs?: number; sitesPerOrg?: number } = {},
): Promise<Generated> {
  const seed = opts.seed ?? 42;
  const batch = opts.batch ?? 1000;
  const concurrency = opts.concurrency ?? 3;
  const sites = makeSites(seed, opts.orgs ?? 50, opts.sitesPerOrg ?? 20);
  const r = rng(seed);
  const t0 = nowNs();
  let next = 0;
  let written = 0;
  let slot = 0;
  let last: Position = START;
  // round-robin over sites; each append is one site's next `batch` events (one writer per site at a time)
  const claim = (): { site: Site; events: NewEvent[]; expected: bigint } | null => {
    if (next >= total) return null;
    const n = Math.min(batch, total - next);
    const site = sites[slot++ % sites.length];
    const expected = site.revision;
    const events: NewEvent[] = [];
    for (let i = 0; i < n; i++, next++) events.push(catalogEvent(r, site, Number(site.revision) + 1 + i, next / total));
    site.revision += BigInt(n);
    return { site, events, expected };
  };
  const busy = new Set<string>();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let job = claim(); job; job = claim()) {
        // a site may come round again while its previous append is in flight: wait for it (expected revision)
        while (busy.has(job.site.websiteId)) await new Promise((res) => setTimeout(res, 1));
        busy.add(job.site.websiteId);
        const r = await store.append(`catalog-${job.site.websiteId}`, job.events, job.expected < 0n ? 'no_stream' : job.expected);
        if (comparePositions(r.position, last) > 0) last = r.position;
        busy.delete(job.site.websiteId);
        written += job.events.length;
      }
    }),
  );
  return { events: written, seconds: secondsSince(t0), sites, last, method: `EventStore.append, ${batch} events per append, ${concurrency} writers` };
}

/**
 * Waits until catch-up readers can see `pos`. Readers stop at the server-wide xmin horizon: a transaction left open
 * in any database of the server (another test suite, say) hides everything committed after it began.
 */
export async function waitUntilVisible(store: EventStore, pos: Position, timeoutMs = 120_000): Promise<void> {
  const t0 = Date.now();
  while (comparePositions(await store.headPosition(), pos) < 0) {
    if (Date.now() - t0 > timeoutMs) throw new Error('the xmin horizon did not pass the generated events: a transaction is held open on the server');
    await sleep(50);
  }
  if (Date.now() - t0 > 200)
    info(`waited ${((Date.now() - t0) / 1000).toFixed(1)} s for an open transaction elsewhere on the server (xmin horizon) before reading`);
}

import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import { parseMasterKey } from './eventstore/keyring';
import { parseMailbox } from './email/address';
import { isModelId, MODEL_IDS } from './domain/models';

const url = (schemes: string[]) =>
  z.string().refine(
    (s) => {
      try {
        return schemes.includes(new URL(s).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}`,
  );

/** TRUST_PROXY's named ranges, as fastify's trustProxy (proxy-addr) names them. */
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/** An address, an address/prefix (CIDR) or an IPv4 address/netmask, as fastify's trustProxy takes them. */
function isProxyAddress(s: string): boolean {
  if (PROXY_RANGES.includes(s)) return true;
  const [addr, bits, ...rest] = s.split('/');
  const v = isIP(addr);
  if (!v || rest.length) return false;
  if (bits === undefined) return true;
  if (/^\d{1,3}$/.test(bits)) return Number(bits) <= (v === 4 ? 32 : 128);
  return v === 4 && isIP(bits) === 4;
}

/**
 * TRUST_PROXY: unset or `false` (the default: the peer's address is the client's), `true` (the leftmost
 * X-Forwarded-For address, whoever set it), a hop count (trust that many proxies in front, counted from the server),
 * or a comma list of the proxies' addresses, CIDR ranges and the names loopback, linklocal, uniquelocal.
 */
export type TrustProxy = boolean | number | string[];
const TrustProxyEnv = z.string().transform((raw, ctx): TrustProxy => {
  const s = raw.trim();
  if (s === 'false') return false;
  if (s === 'true') return true;
  if (/^\d+$/.test(s)) {
    const n = Number(s);
    if (n <= 100) return n === 0 ? false : n;
  }
  const list = s.split(',').map((x) => x.trim());
  const bad = list.find((x) => !isProxyAddress(x));
  if (bad === undefined) return list;
  ctx.addIssue({
    code: 'custom',
    message: `must be false, true, a hop count (0 to 100) or a comma list of proxy addresses, CIDR ranges or loopback, linklocal, uniquelocal (not ${JSON.stringify(bad)})`,
  });
  return z.NEVER;
});

const Env = z.object({
  DATABASE_URL: url(['postgres:', 'postgresql:']).optional(),
  EVENTSTORE_URL: url(['esdb:', 'esdb+discover:']).optional(),
  NATS_URL: url(['nats:', 'tls:', 'ws:', 'wss:']).optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PUBLIC_BASE_URL: url(['http:', 'https:']).optional(),
  ENGINE_MODE: z.enum(['simulated', 'live']).optional(),
  RATE_LIMIT_PER_MIN: z.coerce.number().int().positive().default(600),
  DB_POOL_MAX: z.coerce.number().int().positive().default(10),
  SCHEDULER: z.enum(['on', 'off']).default('on'),
  WORKER_CONCURRENCY: z.coerce.number().int().positive().max(1000).default(16),
  ENGINE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(60_000),
  ENGINE_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  ENGINE_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(4),
  OBSERVATION_EXTRACTOR: z
    .string()
    .regex(/^(rules|llm:[a-z][a-z0-9-]*)$/, "must be 'rules' or 'llm:<model id>'")
    .default('rules'),
  ERASURE_MASTER_KEY: z
    .string()
    .refine((s) => parseMasterKey(s) !== null, 'must be 32 bytes as 64 hex digits or base64')
    .optional(),
  SMTP_URL: url(['smtp:', 'smtps:']).optional(),
  MAIL_FROM: z
    .string()
    .refine((s) => parseMailbox(s) !== null, "must be one address, e.g. 'aivis <no-reply@example.com>'")
    .optional(),
  TRUST_PROXY: TrustProxyEnv.optional(),
  PITCH_MODELS: z
    .string()
    .refine((s) => {
      const ids = s.split(',').map((x) => x.trim());
      return ids.length === 4 && ids.every((id) => isModelId(id)) && new Set(ids).size === ids.length;
    }, 'must be four distinct model ids of the catalogue, comma-separated (a pitch report queries four models)')
    .optional(),
  FACTS_CACHE_MB: z.coerce.number().int().min(16).max(1_048_576).default(512),
  CONTENT_MODEL: z
    .string()
    .refine(isModelId, `must be a model id of the catalogue (${MODEL_IDS.join(', ')})`)
    .default('claude'),
  WEBHOOK_RETRY_SCHEDULE_S: z
    .string()
    .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, 'must be comma-separated whole seconds, e.g. 5,300,1800')
    .default('5,300,1800,7200,18000,36000'),
  WEBHOOK_ALLOW_PRIVATE: z.enum(['0', '1']).default('0'),
});

export interface Config {
  /** embedded = PGlite in dataDir, in-process bus */
  embedded: boolean;
  databaseUrl: string | null;
  eventstoreUrl: string | null;
  natsUrl: string | null;
  dataDir: string;
  host: string;
  port: number;
  logLevel: z.infer<typeof Env>['LOG_LEVEL'];
  publicBaseUrl: string;
  engineMode: 'simulated' | 'live';
  rateLimitPerMin: number;
  dbPoolMax: number;
  /** fire the default and custom schedules on this instance (every instance may: a slot starts once) */
  scheduler: boolean;
  /** units of work (engine calls) this instance answers at once */
  workerConcurrency: number;
  /** `rules` or `llm:<model>` */
  observationExtractor: string;
  /** live engine calls, per model unless infra/models.json says otherwise for a model */
  engineCalls: { timeoutMs: number; retries: number; concurrency: number };
  /** wraps the keys of erasable subjects; null: the embedded default */
  erasureMasterKey: Buffer | null;
  /** the email outbox's SMTP server (`smtp://user:pass@host:587`, `smtps://…:465`); null = .eml files in dataDir/outbox */
  smtpUrl: string | null;
  /** the From of every email; its domain names the Message-IDs */
  mailFrom: string;
  /** which peers' X-Forwarded-For is believed for the client's address (fastify's trustProxy); false = none */
  trustProxy: TrustProxy;
  /** the models a pitch report asks (PITCH_MODELS; default the catalogue's first four) */
  pitchModels: string[];
  /** the catalogue model the content hub writes with (briefs, articles, reviews, revisions) */
  contentModel: string;
  /** bytes of metric facts this instance holds in memory (FACTS_CACHE_MB); least recently used websites go past it */
  factsCacheBytes: number;
  /** the waits before each retry of a webhook delivery, in seconds (the first attempt plus one per wait, then dead) */
  webhookRetryScheduleS: number[];
  /** webhook URLs may be http and private addresses (self-hosted receivers) */
  webhookAllowPrivate: boolean;
}

export class ConfigError extends Error {}

/** env -> typed config; the first problem is reported as one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const r = Env.safeParse(clean);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new ConfigError(`invalid configuration: ${i.path.join('.')} ${i.message}`);
  }
  const e = r.data;
  const embedded = !e.DATABASE_URL;
  return {
    embedded,
    databaseUrl: e.DATABASE_URL ?? null,
    eventstoreUrl: e.EVENTSTORE_URL ?? null,
    natsUrl: e.NATS_URL ?? null,
    dataDir: resolve(e.DATA_DIR),
    host: e.HOST,
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://${e.HOST === '0.0.0.0' ? '127.0.0.1' : e.HOST}:${e.PORT}`).replace(/\/$/, ''),
    engineMode: e.ENGINE_MODE ?? (embedded ? 'simulated' : 'live'),
    rateLimitPerMin: e.RATE_LIMIT_PER_MIN,
    dbPoolMax: e.DB_POOL_MAX,
    scheduler: e.SCHEDULER === 'on',
    workerConcurrency: e.WORKER_CONCURRENCY,
    observationExtractor: e.OBSERVATION_EXTRACTOR,
    engineCalls: { timeoutMs: e.ENGINE_TIMEOUT_MS, retries: e.ENGINE_RETRIES, concurrency: e.ENGINE_CONCURRENCY },
    erasureMasterKey: e.ERASURE_MASTER_KEY ? parseMasterKey(e.ERASURE_MASTER_KEY) : null,
    smtpUrl: e.SMTP_URL ?? null,
    mailFrom: e.MAIL_FROM ?? `aivis <no-reply@${mailDomainOf(e.PUBLIC_BASE_URL)}>`,
    trustProxy: e.TRUST_PROXY ?? false,
    pitchModels: e.PITCH_MODELS ? e.PITCH_MODELS.split(',').map((x) => x.trim()) : MODEL_IDS.slice(0, 4),
    contentModel: e.CONTENT_MODEL,
    factsCacheBytes: e.FACTS_CACHE_MB * 1024 * 1024,
    webhookRetryScheduleS: e.WEBHOOK_RETRY_SCHEDULE_S.split(',').map((x) => Number(x.trim())),
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE === '1',
  };
}

/** The public host name when there is one (a DNS name, not an address), else localhost. */
function mailDomainOf(publicBaseUrl: string | undefined): string {
  const host = publicBaseUrl ? new URL(publicBaseUrl).hostname : '';
  return host.includes('.') && !isIP(host.replace(/^\[|\]$/g, '')) ? host : 'localhost';
}

import { generateKeyPairSync, type JsonWebKey, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { GRANTS_CHANNEL } from './grants';

/**
 * The sign-in's storage in Postgres (ARCHITECTURE.md, "Sign-in"): oidc-provider's artifacts (registered clients,
 * interactions, sessions, grants, authorization codes, refresh tokens) in one table, so every instance sees the
 * same ones, and the provider's secrets (the token signing key, the cookie keys) beside the other shared secrets.
 */
export async function migrateOAuth(db: Knex): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw(`select pg_advisory_xact_lock(hashtextextended('aivis-migrate-oauth', 0))`);
    await trx.raw(`
      create table if not exists aivis_oauth (
        model text not null,
        id text not null,
        payload jsonb not null,
        grant_id text,
        user_code text,
        uid text,
        expires_at timestamptz,
        consumed_at timestamptz,
        primary key (model, id)
      );
      create index if not exists aivis_oauth_grant on aivis_oauth (grant_id) where grant_id is not null;
      create index if not exists aivis_oauth_uid on aivis_oauth (model, uid) where uid is not null;
      create index if not exists aivis_oauth_user_code on aivis_oauth (model, user_code) where user_code is not null;
      create index if not exists aivis_oauth_expires on aivis_oauth (expires_at) where expires_at is not null;
      create index if not exists aivis_oauth_account on aivis_oauth (model, (payload->>'accountId')) where payload->>'accountId' is not null;
      create table if not exists aivis_secrets (name text primary key, value text not null);`);
  });
}

interface Row {
  payload: AdapterPayload | string;
  expires_at: Date | string | null;
  consumed_at: Date | string | null;
}

/** How often (in writes) an instance deletes expired artifacts. */
const SWEEP_EVERY = 500;
let writes = 0;

/** oidc-provider's adapter: one instance per model name (Client, Session, Grant, AuthorizationCode, …). */
export class PostgresOAuthAdapter implements Adapter {
  constructor(
    private readonly db: Knex,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const row = {
      model: this.model,
      id,
      payload: JSON.stringify(payload),
      grant_id: payload.grantId ?? null,
      user_code: payload.userCode ?? null,
      uid: payload.uid ?? null,
      expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
    };
    await this.db('aivis_oauth').insert(row).onConflict(['model', 'id']).merge(['payload', 'grant_id', 'user_code', 'uid', 'expires_at']);
    if (++writes % SWEEP_EVERY === 0) {
      void this.db('aivis_oauth')
        .where('expires_at', '<', new Date())
        .delete()
        .catch(() => undefined);
    }
  }

  private async one(where: Record<string, string>): Promise<AdapterPayload | undefined> {
    const row = (await this.db('aivis_oauth')
      .where({ model: this.model, ...where })
      .first('payload', 'expires_at', 'consumed_at')) as Row | undefined;
    if (!row) return undefined;
    if (row.expires_at && new Date(row.expires_at).getTime() <= Date.now()) return undefined;
    const payload = typeof row.payload === 'string' ? (JSON.parse(row.payload) as AdapterPayload) : row.payload;
    return row.consumed_at ? { ...payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) } : payload;
  }

  find(id: string) {
    return this.one({ id });
  }
  findByUid(uid: string) {
    return this.one({ uid });
  }
  findByUserCode(userCode: string) {
    return this.one({ user_code: userCode });
  }

  async consume(id: string): Promise<void> {
    await this.db('aivis_oauth').where({ model: this.model, id }).update({ consumed_at: new Date() });
  }

  async destroy(id: string): Promise<void> {
    if (this.model === 'Grant') {
      // a grant revoked (a replayed code, a refresh token used twice, a revocation): every instance refuses its access tokens
      await this.db.raw(`with d as (delete from aivis_oauth where model = 'Grant' and id = ? returning id) select pg_notify(?, id) from d`, [
        id,
        GRANTS_CHANNEL,
      ]);
      return;
    }
    await this.db('aivis_oauth').where({ model: this.model, id }).delete();
  }

  /** A grant revoked (a refresh token used twice, a revocation): every artifact of it goes, whatever its model. */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db('aivis_oauth').where('grant_id', grantId).delete();
  }
}

/**
 * One secret shared by every instance: the first instance to ask creates it, the others read it. Created only when it
 * is not there yet: the signing key's RSA key pair costs 0.2-0.5 s of CPU, which each start used to spend and throw away.
 */
async function sharedSecret(db: Knex, name: string, create: () => string): Promise<string> {
  const read = async () => ((await db('aivis_secrets').where('name', name).first('value')) as { value: string } | undefined)?.value;
  const found = await read();
  if (found !== undefined) return found;
  await db.raw('insert into aivis_secrets (name, value) values (?, ?) on conflict (name) do nothing', [name, create()]);
  return (await read())!;
}

export interface OAuthSecrets {
  /** the access tokens' signing key (RS256: the cheapest signature to verify on every MCP request) */
  signingKey: JsonWebKey & { kid: string; alg: 'RS256'; use: 'sig' };
  /** keys signing the provider's cookies */
  cookieKeys: string[];
  /** the key of the sign-in forms' CSRF tokens */
  formKey: string;
}

export async function oauthSecrets(db: Knex): Promise<OAuthSecrets> {
  const signing = await sharedSecret(db, 'oauth_signing_jwk', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = privateKey.export({ format: 'jwk' });
    return JSON.stringify({ ...jwk, kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' });
  });
  const cookies = await sharedSecret(db, 'oauth_cookie_keys', () => JSON.stringify([randomBytes(32).toString('base64url')]));
  const form = await sharedSecret(db, 'oauth_form_key', () => randomBytes(32).toString('base64url'));
  return { signingKey: JSON.parse(signing), cookieKeys: JSON.parse(cookies), formKey: form };
}

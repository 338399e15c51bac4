import { createReadStream, readFileSync, statSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { importCrawlerLog } from '../commands/crawlers/import-crawler-log';
import { botMatcher, LOG_FORMATS, type LogFormat } from './analysis/crawler-logs';
import { replaceRanges } from './analysis/crawler-ranges';
import { listOrganizationMembers } from '../queries/team/members';
import type { Principal } from './domain/principal';
import { PITCH_ALLOWANCE } from '../commands/pitches/request-pitch';
import { parseArgs } from 'node:util';
import { ImportResponses, importResponses, MAX_IMPORT } from '../commands/responses/import-responses';
import { importedExternalIds } from '../queries/responses/list';
import { SYSTEM_ACTOR } from './domain/events';
import { issueMessage } from './app/problem';
import { createOrganization, CreateOrganization } from '../commands/organizations/create-organization';
import { openReservations, settleOpenReservations } from '../commands/allowances/reconcile';
import { isDomainError } from './domain/errors';
import { decodeUtf8, jsonDeeperThan, NOT_UTF8, TOO_DEEP } from './domain/raw-input';
import { Uuid } from './domain/schemas';
import { ConfigError, loadConfig } from './config';
import { DataDirLockedError } from './embedded-lock';
import { createLogger } from './logger';
import { openRuntime, type Runtime } from './runtime';
import { passwordProblem, setPassword } from './auth/accounts';
import { GrantCredits, grantCredits } from '../commands/credits/grant-credits';
import { oneOffCredits } from './app/credits';
import { cutText } from './domain/text';

type Command = (rt: Runtime, args: string[]) => Promise<unknown>;

class UsageError extends Error {}

/** The command's `--name value` options (all strings, all optional); an unknown option is refused. */
const stringOptions = <K extends string>(argv: string[], ...names: K[]): Partial<Record<K, string>> =>
  parseArgs({ args: argv, options: Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])), strict: true }).values as Partial<
    Record<K, string>
  >;

/** The value of --`name` as a UUID; another value is a usage error naming the option. */
function uuidOption(name: string, value: string): string {
  const r = Uuid.safeParse(value);
  if (!r.success) throw new UsageError(`--${name}: ${r.error.issues[0].message}`);
  return r.data;
}

/** `read(file)`; a file that cannot be read is a usage error naming it. */
function readable<T>(file: string, read: (file: string) => T): T {
  try {
    return read(file);
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
  }
}

/** The password for users:set-password: stdin when piped (its first line), else asked on the terminal without echo. */
async function readPassword(): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const c of stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0];
  }
  const ask = (prompt: string) =>
    new Promise<string>((resolve) => {
      process.stderr.write(prompt);
      let value = '';
      stdin.setRawMode(true);
      stdin.resume();
      stdin.setEncoding('utf8');
      const onData = (ch: string) => {
        for (const c of ch) {
          if (c === '\r' || c === '\n' || c === '\u0004') {
            stdin.setRawMode(false);
            stdin.pause();
            stdin.off('data', onData);
            process.stderr.write('\n');
            return resolve(value);
          }
          if (c === '\u0003') {
            stdin.setRawMode(false);
            process.exit(130);
          }
          value = c === '\u007f' ? cutText(value, value.length - 1) : value + c;
        }
      };
      stdin.on('data', onData);
    });
  const first = await ask('New password: ');
  const again = await ask('Again: ');
  if (first !== again) throw new UsageError('the two passwords differ');
  return first;
}

/** A progress line on stderr, redrawn in place on a terminal. */
export function progress(label: string) {
  const tty = process.stderr.isTTY;
  let last = 0;
  return {
    update(done: number, total?: number) {
      const now = Date.now();
      if (now - last < 200 && done !== total) return;
      last = now;
      const pct = total ? ` ${Math.floor((100 * done) / Math.max(total, 1))}%` : '';
      const line = `${label}: ${done}${total ? `/${total}` : ''}${pct}`;
      process.stderr.write(tty ? `\r${line}` : `${line}\n`);
    },
    done(msg: string) {
      process.stderr.write(`${tty ? '\r' : ''}${label}: ${msg}\n`);
    },
  };
}

/**
 * Reads a JSONL file of import items: one JSON object per line (blank lines skipped); a bad line names its number.
 * The file must be UTF-8 and each line nested at most as deep as a request body may be, as over HTTP.
 */
function readJsonl(file: string): unknown[] {
  const bytes = readable(file, (f) => readFileSync(f));
  const text = decodeUtf8(bytes);
  if (text === null) {
    const line = bytes
      .toString('latin1')
      .split('\n')
      .findIndex((l) => decodeUtf8(Buffer.from(l, 'latin1')) === null);
    throw new UsageError(`${file}:${line + 1}: ${NOT_UTF8}`);
  }
  const items: unknown[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    if (jsonDeeperThan(line)) throw new UsageError(`${file}:${i + 1}: ${TOO_DEEP}`);
    try {
      items.push(JSON.parse(line));
    } catch {
      throw new UsageError(`${file}:${i + 1}: not a JSON object`);
    }
  });
  return items;
}

const commands: Record<string, { usage: string; run: Command }> = {
  'org:create': {
    usage: 'org:create --name N [--plan free|pro|enterprise] [--features a,b] [--pitch-allowance N] [--owner-email E]',
    async run(rt, argv) {
      const values = stringOptions(argv, 'name', 'plan', 'features', 'pitch-allowance', 'owner-email');
      const input = CreateOrganization.safeParse({
        name: values.name,
        plan: values.plan,
        features:
          values.features === undefined
            ? undefined
            : values.features
                .split(',')
                .map((f) => f.trim())
                .filter(Boolean),
        pitch_allowance: values['pitch-allowance'] === undefined ? undefined : Number(values['pitch-allowance']),
        owner_email: values['owner-email'],
      });
      if (!input.success) {
        const i = input.error.issues[0];
        throw new UsageError(`${i.path.join('.') || 'input'}: ${i.message}`);
      }
      const r = await createOrganization(rt.store, input.data);
      if (isDomainError(r)) throw new Error(r.message);
      return r.result;
    },
  },
  'users:list': {
    usage: 'users:list --org O',
    async run(rt, argv) {
      const values = stringOptions(argv, 'org');
      if (!values.org) throw new UsageError('usage: users:list --org O');
      const org = uuidOption('org', values.org);
      // the members are read from the team read model: bring it up to date first (a running server's leader does it)
      await rt.runners.get('organizations')!.runToHead();
      await rt.runners.get('team')!.runToHead();
      const row = await rt.database.db('rm_organizations').where('id', org).first('id', 'plan', 'features');
      if (!row) throw new UsageError(`organization ${values.org} not found`);
      const operator: Principal = {
        organizationId: row.id,
        apiKeyId: null,
        userId: null,
        websiteIds: null,
        partner: true,
        plan: row.plan,
        features: row.features,
      };
      return { members: await listOrganizationMembers(rt.database.db, operator) };
    },
  },
  'users:set-password': {
    usage: 'users:set-password --email E [--org O]   (the password on stdin, or asked for)',
    async run(rt, argv) {
      const values = stringOptions(argv, 'email', 'org');
      if (!values.email) throw new UsageError('usage: users:set-password --email E [--org O]');
      const org = values.org === undefined ? undefined : uuidOption('org', values.org);
      // the users are read from the team read model: bring it up to date first (a running server's leader does it)
      await rt.runners.get('organizations')!.runToHead();
      await rt.runners.get('team')!.runToHead();
      const password = await readPassword();
      const problem = passwordProblem(password);
      if (problem) throw new UsageError(problem);
      const r = await setPassword(rt, { email: values.email, password, organizationId: org }).catch((e: Error) => {
        throw new UsageError(e.message);
      });
      await rt.runners.get('team')!.runToHead();
      return { ...r, password_set: true };
    },
  },
  'credits:grant': {
    usage: 'credits:grant --org O --credits N [--reason R]',
    async run(rt, argv) {
      const values = stringOptions(argv, 'org', 'credits', 'reason');
      if (!values.org || values.credits === undefined) throw new UsageError('usage: credits:grant --org O --credits N [--reason R]');
      const org = uuidOption('org', values.org);
      const input = GrantCredits.safeParse({ credits: values.credits.trim() === '' ? Number.NaN : Number(values.credits), reason: values.reason });
      if (!input.success) {
        const i = input.error.issues[0];
        throw new UsageError(`--${i.path.join('.')}: ${i.message}`);
      }
      const r = await grantCredits({ store: rt.store, organizationId: org, actor: SYSTEM_ACTOR }, input.data);
      if (isDomainError(r)) throw new UsageError(`organization ${values.org}: ${r.message}`);
      // the balance is read from the credits read model: bring it up to date first (a running server's leader does it)
      await rt.runners.get('organizations')!.runToHead();
      await rt.runners.get('credits')!.runToHead();
      const row = await rt.database.db('rm_organizations').where('id', org).first('plan');
      return {
        organization_id: org,
        grant_id: r.result.grant_id,
        credits: input.data.credits,
        one_off_balance: await oneOffCredits(rt.database.db, org, row.plan, new Date()),
      };
    },
  },
  'responses:import': {
    usage: 'responses:import --website W FILE.jsonl',
    async run(rt, argv) {
      const { values, positionals } = parseArgs({ args: argv, options: { website: { type: 'string' } }, allowPositionals: true, strict: true });
      if (!values.website || positionals.length !== 1) throw new UsageError('usage: responses:import --website W FILE.jsonl');
      const db = rt.database.db;
      const website = await db('rm_websites').where('id', uuidOption('website', values.website)).first('id', 'organization_id', 'status');
      if (!website) throw new UsageError(`website ${values.website} not found`);
      const items = readJsonl(positionals[0]);
      if (!items.length) throw new UsageError(`${positionals[0]} holds no answers`);
      const answers = rt.runners.get('answers')!;
      const ctx = { store: rt.store, organizationId: website.organization_id, websiteId: website.id, actor: SYSTEM_ACTOR };
      const p = progress('importing');
      const out = { imported: 0, skipped: 0, batches: 0 };
      for (let i = 0; i < items.length; i += MAX_IMPORT) {
        const input = ImportResponses.safeParse({ website_id: website.id, responses: items.slice(i, i + MAX_IMPORT) });
        if (!input.success) {
          const issue = input.error.issues[0];
          // name the file's line rather than the batch's index
          const path = issue.path.map(String);
          const line = path[0] === 'responses' ? `line ${i + Number(path[1]) + 1}: ` : '';
          throw new UsageError(`${line}${issueMessage({ ...issue, path: issue.path.slice(2) }, undefined)}`);
        }
        // skips are decided on the answers read model: bring it up to date first (a running server's leader does it)
        await answers.runToHead();
        const known = await importedExternalIds(
          db,
          website.id,
          input.data.responses.flatMap((r) => (r.external_id ? [r.external_id] : [])),
        );
        const r = await importResponses(ctx, { ...input.data, already_imported: known });
        if (isDomainError(r)) throw new UsageError(`batch starting at line ${i + 1}: ${r.message}`);
        out.imported += r.result.imported;
        out.skipped += r.result.skipped;
        out.batches++;
        p.update(Math.min(items.length, i + MAX_IMPORT), items.length);
      }
      await answers.runToHead();
      p.done(`${out.imported} imported, ${out.skipped} skipped`);
      return out;
    },
  },
  'allowances:reconcile': {
    usage: 'allowances:reconcile [--allowance NAME] [--older-than-minutes N] [--settle]',
    async run(rt, argv) {
      const { values } = parseArgs({
        args: argv,
        options: { allowance: { type: 'string' }, 'older-than-minutes': { type: 'string' }, settle: { type: 'boolean' } },
        strict: true,
      });
      const minutes = values['older-than-minutes'] === undefined ? 10 : Number(values['older-than-minutes']);
      if (!Number.isFinite(minutes) || minutes < 0) throw new UsageError('--older-than-minutes must be a number of minutes');
      // the reservations read model first, as far as the log goes (a running server's leader does it)
      await rt.runners.get('allowances')!.runToHead();
      const open = await openReservations(rt.database.db, rt.store, { allowance: values.allowance, olderThanMs: minutes * 60_000 });
      const settled = values.settle ? (await settleOpenReservations({ store: rt.store, actor: SYSTEM_ACTOR }, { open })).result : [];
      return { open, settled };
    },
  },
  'pitches:reconcile': {
    usage: 'pitches:reconcile [--older-than-minutes N] [--dry-run]',
    async run(rt, argv) {
      const { values } = parseArgs({
        args: argv,
        options: { 'older-than-minutes': { type: 'string' }, 'dry-run': { type: 'boolean' } },
        strict: true,
      });
      const minutes = values['older-than-minutes'] === undefined ? 10 : Number(values['older-than-minutes']);
      if (!Number.isFinite(minutes) || minutes < 0) throw new UsageError('--older-than-minutes must be a number of minutes');
      await rt.runners.get('allowances')!.runToHead();
      // pitch reservations still open: a report whose job ended or never came to be is settled (unless --dry-run), one still running is listed
      const open = await openReservations(rt.database.db, rt.store, { allowance: PITCH_ALLOWANCE, olderThanMs: minutes * 60_000 });
      const settled = values['dry-run'] ? [] : (await settleOpenReservations({ store: rt.store, actor: SYSTEM_ACTOR }, { open })).result;
      return { open, settled };
    },
  },
  'projections:rebuild': {
    usage: 'projections:rebuild [NAME…]',
    async run(rt, names) {
      const all = [...rt.runners.keys()];
      const chosen = names.length ? names : all;
      for (const n of chosen) if (!rt.runners.has(n)) throw new UsageError(`unknown projection ${n}; known: ${all.join(', ')}`);
      const out: Record<string, { events: number; seconds: number; set_aside: number }> = {};
      for (const n of chosen) {
        const runner = rt.runners.get(n)!;
        const t0 = Date.now();
        const p = progress(`rebuilding ${n}`);
        // beside the live read model, which serves (and a running server keeps applying) until the swap
        const events = await runner.rebuild((done) => p.update(done));
        const setAside = runner.setAside().size;
        p.done(`${events} events, swapped in${setAside ? `; ${setAside} website(s) set aside (see /readyz)` : ''}`);
        out[n] = { events, seconds: (Date.now() - t0) / 1000, set_aside: setAside };
      }
      return { rebuilt: out };
    },
  },
  'crawlers:import': {
    usage: 'crawlers:import --website W --file F [--format combined|json|cloudfront]  (F.gz is gunzipped)',
    async run(rt, argv) {
      const values = stringOptions(argv, 'website', 'file', 'format');
      if (!values.website || !values.file) throw new UsageError('usage: crawlers:import --website W --file F [--format combined|json|cloudfront]');
      const websiteId = uuidOption('website', values.website);
      const format = (values.format ?? 'combined') as LogFormat;
      if (!LOG_FORMATS.includes(format)) throw new UsageError(`--format: must be one of ${LOG_FORMATS.join(', ')}`);
      const website = await rt.database.db('rm_websites').where('id', websiteId).first('id', 'organization_id', 'normalized_url');
      if (!website) throw new UsageError(`website ${values.website} not found`);
      const size = readable(values.file, (f) => statSync(f).size);
      const file = createReadStream(values.file);
      let read = 0;
      file.on('data', (c) => {
        read += c.length;
      });
      const source = values.file.endsWith('.gz') ? file.pipe(createGunzip()) : file;
      const p = progress('importing');
      const ctx = { store: rt.store, organizationId: website.organization_id, websiteId: website.id, actor: SYSTEM_ACTOR };
      const r = await importCrawlerLog(
        {
          db: rt.database.db,
          ctx,
          website: { id: website.id, host: website.normalized_url.split(/[/?]/)[0] },
          format,
          onProgress: () => p.update(read, size),
        },
        source,
      );
      await rt.runners.get('crawlers')?.runToHead();
      const { position: _p, ...counts } = r;
      p.done(`${counts.lines} lines, ${counts.ai_hits} AI hits, ${counts.duplicates} duplicates, ${counts.rejected} rejected`);
      return counts;
    },
  },
  'crawlers:ranges': {
    usage: "crawlers:ranges --bot B --file F  (F in the operators' {prefixes: [{ipv4Prefix|ipv6Prefix}]} format)",
    async run(_rt, argv) {
      const values = stringOptions(argv, 'bot', 'file', 'source');
      if (!values.bot || !values.file) throw new UsageError('usage: crawlers:ranges --bot B --file F');
      const bot = botMatcher().byToken.get(values.bot.toLowerCase());
      if (!bot) throw new UsageError(`--bot: ${values.bot} is not a bot of infra/ai-crawlers.json`);
      const text = readable(values.file, (f) => readFileSync(f, 'utf8'));
      try {
        return replaceRanges(bot.token, text, values.source ?? values.file);
      } catch (e) {
        throw new UsageError(`${values.file}: ${(e as Error).message}`);
      }
    },
  },
  'projections:retry': {
    usage: 'projections:retry NAME [--website W]',
    async run(rt, argv) {
      const { values, positionals } = parseArgs({ args: argv, options: { website: { type: 'string' } }, allowPositionals: true, strict: true });
      if (positionals.length !== 1) throw new UsageError('usage: projections:retry NAME [--website W]');
      const all = [...rt.runners.keys()];
      const runner = rt.runners.get(positionals[0]);
      if (!runner) throw new UsageError(`unknown projection ${positionals[0]}; known: ${all.join(', ')}`);
      return { [positionals[0]]: await runner.retry(values.website) };
    },
  },
};

async function main(): Promise<number> {
  const [name, ...rest] = process.argv.slice(2);
  const cmd = name ? commands[name] : undefined;
  if (!cmd) {
    process.stderr.write(
      `usage: npm run cli -- <command>\n${Object.values(commands)
        .map((c) => `  ${c.usage}`)
        .join('\n')}\n`,
    );
    return 2;
  }
  let rt: Runtime | null = null;
  try {
    const config = loadConfig();
    rt = await openRuntime(config, createLogger(process.env.LOG_LEVEL ?? 'warn', { toStderr: true }), { withoutBus: true, reportEngines: false });
    const out = await cmd.run(rt, rest);
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  } catch (err) {
    const known = err instanceof ConfigError || err instanceof DataDirLockedError || err instanceof UsageError;
    const msg = err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${known ? msg : msg.split('\n')[0]}\n`);
    return 1;
  } finally {
    await rt?.close().catch(() => undefined);
  }
}

process.exitCode = await main();

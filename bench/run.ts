/**
 * `npm run bench -- [--quick] [name ...]`: each benchmark prints `name value unit` per figure (with its reference and
 * the ratio where one is named, the goal and whether it is met, and a `# note`), context as `# ` lines, then a
 * summary block and the process's peak RSS. Every benchmark works in its own fresh database on the Postgres server
 * at DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards.
 */
import { execSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { abRun } from './ab';
import { analysis } from './analysis';
import { answers } from './answers';
import { metrics } from './metrics';
import { metricsMany } from './metrics-many';
import { observations } from './observations';
import { workers } from './workers';
import { signal } from './signal';
import { reports } from './reports';
import { append } from './append';
import { auth } from './auth';
import { catchup } from './catchup';
import { erasure } from './erasure';
import { http, machineSpeed } from './http';
import { jobs } from './jobs';
import { type Bench, dropAll, figures, goalMet, info, isRate, line, nowNs, report, secondsSince, SERVER_URL } from './lib';
import { rebuild } from './rebuild';
import { team } from './team';
import { aiValue } from './ai-value';
import { knowledge } from './knowledge';
import { credits } from './credits';
import { seo } from './seo';

import { oauth } from './oauth';

import { pitches } from './pitches';
import { content } from './content';
import { shopping } from './shopping';
import { evidence } from './evidence';
import { crawlers } from './crawlers';
import { entityQuality } from './entity-quality';
import { webhooks } from './webhooks';
import { alerts } from './alerts';

const all: Bench[] = [
  append,
  catchup,
  rebuild,
  erasure,
  analysis,
  auth,
  http,
  workers,
  signal,
  jobs,
  metrics,
  metricsMany,
  observations,
  answers,
  team,
  aiValue,
  knowledge,
  credits,
  oauth,
  pitches,
  seo,
  content,
  shopping,
  evidence,
  crawlers,
  entityQuality,
  webhooks,
  alerts,
  reports,
];

function usage(): never {
  process.stderr.write(
    `usage: npm run bench -- [--quick] [--ab <commit> [--rounds N]] [${all.map((b) => b.name).join('|')} ...]\n  --ab: run the named benchmarks from a worktree of <commit> and from here, alternately (N rounds, 2 by default), and print CPU per unit of both and the ratio new/old\n${all.map((b) => `  ${b.name.padEnd(8)} ${b.about}`).join('\n')}\n`,
  );
  process.exit(2);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) usage();
  const quick = args.includes('--quick');
  const valued = new Map<string, string>();
  const names: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--ab' || a === '--rounds') {
      if (i + 1 >= args.length) usage();
      valued.set(a, args[++i]);
    } else if (a.startsWith('--')) {
      if (a !== '--quick') usage();
    } else names.push(a);
  }
  for (const n of names) if (!all.some((b) => b.name === n)) usage();
  const ab = valued.get('--ab');
  if (ab) {
    const rounds = Number(valued.get('--rounds') ?? 2);
    if (!Number.isInteger(rounds) || rounds < 1 || names.length === 0) usage();
    const t0 = nowNs();
    await abRun(ab, names, quick, rounds);
    process.stdout.write(`\n# summary (${secondsSince(t0).toFixed(0)} s, A/B against ${ab}${quick ? ', quick' : ''})\n`);
    for (const f of figures) process.stdout.write(`${line(f).split('  # ')[0]}\n`);
    return 0;
  }
  const chosen = names.length ? all.filter((b) => names.includes(b.name)) : all;

  const u = new URL(SERVER_URL);
  let commit = '?';
  try {
    commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    /* not a checkout */
  }
  info(
    `aivis bench ${quick ? '--quick ' : ''}${chosen.map((b) => b.name).join(' ')} | ${new Date().toISOString()} | commit ${commit} (+ working tree)`,
  );
  info(
    `node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} | Postgres ${u.host}`,
  );

  const t0 = nowNs();
  let failed = 0;
  if (!chosen.includes(http)) {
    try {
      await machineSpeed(quick ? 2 : 5);
    } catch (err) {
      info(`machine speed not measured: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  for (const b of chosen) {
    const tb = nowNs();
    try {
      await b.run({ quick });
    } catch (err) {
      failed++;
      process.stdout.write(`# ${b.name} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
    info(`${b.name} took ${secondsSince(tb).toFixed(1)} s; load average now ${loadavg()[0].toFixed(2)}`);
  }
  report('peak_rss_mb', process.resourceUsage().maxRSS / 1024, 'MB', {
    note: 'the bench process: data generators, runners and the in-process HTTP server (autocannon runs in a child process)',
  });

  const goals = figures.filter((f) => f.goal);
  process.stdout.write(
    `\n# summary (${secondsSince(t0).toFixed(0)} s${quick ? ', quick' : ''}): ${goals.filter((f) => goalMet(f)).length}/${goals.length} goals met${failed ? `, ${failed} benchmark(s) FAILED` : ''}\n`,
  );
  for (const f of figures) process.stdout.write(`${line(f).split('  # ')[0]}\n`);
  const bare = figures.filter(isRate).filter((f) => !f.cpu);
  if (bare.length) process.stdout.write(`# throughput figures without CPU per unit: ${bare.map((f) => f.name).join(', ')}\n`);
  return failed ? 1 : 0;
}

const stop = () => {
  void dropAll().finally(() => process.exit(130));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

main()
  .then(async (code) => {
    await dropAll();
    process.exit(code);
  })
  .catch(async (err) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await dropAll();
    process.exit(1);
  });

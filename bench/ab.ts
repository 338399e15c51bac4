/**
 * `npm run bench -- [--quick] NAME --ab <commit> [--rounds N]`: the same benchmarks run from a checkout of `<commit>`
 * (a detached git worktree in the temp dir, node_modules linked from here) and from this checkout, alternately
 * (A B A B ...), each in its own process on a fresh database; then the CPU per unit of each side and the ratio new/old.
 * One run on one machine, so the host's speed and load hit both sides alike.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { info, median, report } from './lib';

/** A figure as a bench process printed it: `name value unit  ...  # note`. */
interface Printed {
  value: number;
  unit: string;
  note: string;
  /** `cpu N us/<unit> (node a + Postgres b)` printed beside a rate */
  cpu?: { unit: string; nodeUs: number; pgUs: number };
}

/** The figures one bench process printed before its summary, by name. */
export function parseFigures(stdout: string): Map<string, Printed> {
  const out = new Map<string, Printed>();
  for (const l of stdout.split('\n')) {
    if (l.startsWith('# summary')) break;
    const m = /^([a-z][a-z0-9_]*) (-?[0-9.e+]+|NaN|Infinity) (\S+)(.*)$/.exec(l);
    if (m && !out.has(m[1])) {
      const [rest, note = ''] = m[4].split('  # ');
      const c = /\bcpu [0-9.]+ us\/(\w+) \(node ([0-9.]+) \+ Postgres ([0-9.]+)\)/.exec(rest);
      out.set(m[1], { value: Number(m[2]), unit: m[3], note, ...(c && { cpu: { unit: c[1], nodeUs: Number(c[2]), pgUs: Number(c[3]) } }) });
    }
  }
  return out;
}

/**
 * The CPU per unit of each `*_cpu_us_per_*` figure, split into node and Postgres by its note; and of each rate printed
 * with its CPU per unit (`<rate>_cpu_us_per_<unit>`), so that a commit whose bench printed only that still compares.
 */
export function cpuPerUnit(figs: Map<string, Printed>): Map<string, { nodeUs: number; pgUs: number }> {
  const out = new Map<string, { nodeUs: number; pgUs: number }>();
  for (const [name, f] of figs) {
    // a rate with its CPU printed beside it counts as `<rate>_cpu_us_per_<unit>` (not the machine's own speed, bare_fastify_rps)
    if (f.cpu && name !== 'bare_fastify_rps' && !/_cpu_us_per_/.test(name))
      out.set(`${name}_cpu_us_per_${f.cpu.unit}`, { nodeUs: f.cpu.nodeUs, pgUs: f.cpu.pgUs });
    if (!/_cpu_us_per_/.test(name)) continue;
    const node = /\bnode (-?[0-9.]+) us/.exec(f.note);
    const pg = /Postgres (-?[0-9.]+) us/.exec(f.note);
    // `node X us ... Postgres Y us`: the value is their sum; `Postgres Y us` alone: the value is node's
    if (node && pg) out.set(name, { nodeUs: Number(node[1]), pgUs: Number(pg[1]) });
    else out.set(name, { nodeUs: f.value, pgUs: pg ? Number(pg[1]) : 0 });
  }
  return out;
}

const git = (args: string[], cwd: string) =>
  execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    .toString()
    .trim();

/** A detached worktree of `commit` beside this checkout (reused when it exists), node_modules linked from here. */
export function checkoutOf(commit: string, here: string): { dir: string; sha: string } {
  const sha = git(['rev-parse', '--verify', `${commit}^{commit}`], here);
  const dir = join(tmpdir(), `aivis-ab-${sha.slice(0, 12)}`);
  if (!existsSync(join(dir, 'package.json'))) git(['worktree', 'add', '--detach', dir, sha], here);
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(realpathSync(join(here, 'node_modules')), join(dir, 'node_modules'));
  return { dir, sha };
}

/**
 * The node options a checkout's own `npm run bench` starts with (its package.json), so that each side runs as it would
 * alone: a side that changed them (say the collector's threads) is measured with its own.
 */
export function benchNodeOptions(dir: string): string[] {
  const script: string = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts?.bench ?? '';
  const words = script.split(/\s+/);
  const start = words.indexOf('node');
  const end = words.indexOf('bench/run.ts');
  return start >= 0 && end > start ? words.slice(start + 1, end) : ['--import', 'tsx'];
}

function runBench(dir: string, args: string[]): Promise<string> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [...benchNodeOptions(dir), 'bench/run.ts', ...args], {
      cwd: dir,
      env: process.env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.on('error', rej);
    child.on('exit', (code) => (code === 0 ? res(out) : rej(new Error(`bench in ${dir} exited ${code}:\n${out.slice(-2000)}`))));
  });
}

/** Runs `names` from `commit` and from here, `rounds` times each, alternating, and reports CPU per unit and ratios. */
export async function abRun(commit: string, names: string[], quick: boolean, rounds: number): Promise<void> {
  const here = resolve('.');
  const old = checkoutOf(commit, here);
  const head = git(['rev-parse', '--short', 'HEAD'], here);
  info(`A/B: A = ${old.sha.slice(0, 7)} (${old.dir}), B = ${head} + working tree (${here}); ${rounds} rounds, A then B each round`);
  const args = [...(quick ? ['--quick'] : []), ...names];
  const sides = { a: [] as Map<string, Printed>[], b: [] as Map<string, Printed>[] };
  for (let i = 0; i < rounds; i++) {
    for (const [side, dir] of [
      ['a', old.dir],
      ['b', here],
    ] as const) {
      const figs = parseFigures(await runBench(dir, args));
      sides[side].push(figs);
      const cpu = [...cpuPerUnit(figs)].map(([n, c]) => `${n} node ${c.nodeUs.toFixed(0)} + Postgres ${c.pgUs.toFixed(0)} us`);
      const rates = [...figs]
        .filter(([, f]) => f.unit.endsWith('/s') || f.unit === 'ms')
        // a latency's note (its spread, its CPU per request) beside it: the old side may print no CPU figure for it
        .map(([n, f]) => (f.unit === 'ms' ? `${n} ${f.value.toFixed(1)} ms (${f.note})` : `${n} ${f.value.toFixed(0)} ${f.unit}`));
      info(`A/B round ${i + 1} ${side === 'a' ? 'A (old)' : 'B (new)'}: ${[...rates, ...cpu].join('; ')}`);
    }
  }
  const names2 = [...cpuPerUnit(sides.b[0] ?? new Map())].map(([n]) => n);
  if (names2.length === 0) throw new Error('A/B: the benchmarks printed no *_cpu_us_per_* figure');
  for (const n of names2) {
    const per = (side: Map<string, Printed>[]) => {
      const xs = side.map((f) => cpuPerUnit(f).get(n)).filter((c) => c !== undefined);
      return { node: median(xs.map((c) => c.nodeUs)), pg: median(xs.map((c) => c.pgUs)), total: median(xs.map((c) => c.nodeUs + c.pgUs)) };
    };
    // an older commit's bench may not print it (3a3f806 prints no CPU beside its rates): a NaN ratio would read as a goal missed
    if (!sides.a.some((f) => cpuPerUnit(f).has(n))) {
      info(`A/B ${n}: A printed no such figure; not compared`);
      continue;
    }
    const a = per(sides.a);
    const b = per(sides.b);
    const side = (x: typeof a) => `node ${x.node.toFixed(0)} + Postgres ${x.pg.toFixed(0)} = ${x.total.toFixed(0)} us`;
    info(`A/B ${n} (median of ${rounds}): A ${side(a)}; B ${side(b)}`);
    report(`${n}_ab_ratio`, b.total / a.total, 'new/old', {
      goal: { op: '<=', value: 0.5 },
      note: `node+Postgres CPU per unit, median of ${rounds} alternating rounds: ${b.total.toFixed(0)} us (${head}) / ${a.total.toFixed(0)} us (${old.sha.slice(0, 7)}); node alone ${(b.node / a.node).toFixed(3)}, Postgres alone ${(b.pg / a.pg).toFixed(3)}`,
    });
  }
}

/**
 * Micro-benchmark of the pure answer analysis (src/analysis/answer.ts): mentions, positions, sources
 * and citations of generated answers (~800 characters, 11 entities), single-threaded, no I/O.
 * Run alone with `npx tsx bench/analysis.ts [--quick]`; exports `analysis` for the bench runner.
 */
import { cpus, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { analyzeAnswer, clearUrlCaches, compileEntities, type AnswerInput, type EntityInput } from '../src/analysis/answer';
import { seededRandom } from '../src/domain/random';
import { type Bench, info, nowNs, report, secondsSince } from './lib';

const mulberry32 = seededRandom;

/** The brand plus ten competitors, with identifiers and punctuation as real catalogues have them. */
export const ENTITIES: EntityInput[] = [
  { id: 'e0', name: 'Brightmetrics', is_self: true, identifiers: ['BrightMetrics AI'], url: 'https://www.brightmetrics.io' },
  { id: 'e1', name: 'Tableau', is_self: false, identifiers: ['Tableau Cloud'], url: 'https://www.tableau.com' },
  { id: 'e2', name: 'Looker', is_self: false, identifiers: ['Looker Studio', 'Google Looker'], url: 'https://cloud.google.com/looker' },
  { id: 'e3', name: 'Power BI', is_self: false, identifiers: ['Microsoft Power BI', 'PowerBI'], url: 'https://powerbi.microsoft.com' },
  { id: 'e4', name: 'Qlik Sense', is_self: false, identifiers: ['Qlik'], url: 'https://www.qlik.com' },
  { id: 'e5', name: 'Domo', is_self: false, identifiers: [], url: 'https://www.domo.com' },
  { id: 'e6', name: 'Sisense', is_self: false, identifiers: [], url: 'https://www.sisense.com' },
  { id: 'e7', name: 'ThoughtSpot', is_self: false, identifiers: [], url: 'https://www.thoughtspot.com' },
  { id: 'e8', name: 'C3.ai', is_self: false, identifiers: [], url: 'https://c3.ai' },
  { id: 'e9', name: 'monday.com', is_self: false, identifiers: ['monday'], url: 'https://monday.com' },
  { id: 'e10', name: 'Zoho Analytics', is_self: false, identifiers: ['Zoho'], url: 'https://www.zoho.com/analytics' },
];

const THIRD_PARTY = [
  'www.g2.com',
  'www.capterra.com',
  'www.reddit.com',
  'www.gartner.com',
  'www.forbes.com',
  'en.wikipedia.org',
  'medium.com',
  'www.techradar.com',
  'www.trustradius.com',
  'www.youtube.com',
  'news.ycombinator.com',
  'www.getapp.com',
  'www.softwareadvice.com',
  'towardsdatascience.com',
  'www.pcmag.com',
  'blog.hubspot.com',
  'www.zdnet.com',
  'www.bbc.co.uk',
  'www.computerweekly.com',
  'dev.to',
];
const ENTITY_HOSTS = [
  'www.brightmetrics.io',
  'docs.brightmetrics.io',
  'www.tableau.com',
  'help.tableau.com',
  'cloud.google.com',
  'powerbi.microsoft.com',
  'learn.microsoft.com',
  'www.qlik.com',
  'www.domo.com',
  'www.sisense.com',
  'www.thoughtspot.com',
  'c3.ai',
  'monday.com',
  'www.zoho.com',
];
const WORDS = (
  'the a for with and of to in on best top tool tools teams small business enterprise pricing price plan plans free trial ' +
  'dashboards dashboard reporting reports data analytics visualization self-service governance integration integrations connectors ' +
  'warehouse cloud on-premise security scalable easy powerful flexible modern AI-powered insights embedded users seats licence ' +
  'support community documentation learning curve strong weak option choice alternative alternatives compared features feature ' +
  'sharing collaboration mobile real-time natural language queries SQL spreadsheets Excel budget mid-market startups'
).split(' ');
const SLUGS = [
  'pricing',
  'features',
  'reviews',
  'compare',
  'blog',
  'docs',
  'alternatives',
  'best-bi-tools',
  'guide',
  'news',
  'case-study',
  'integrations',
];

interface Corpus {
  answers: AnswerInput[];
  avgChars: number;
  avgCitations: number;
  withUrlsInText: number;
}

/** Deterministic answers shaped like engine output: intro, a Markdown list of vendors, a closing paragraph. */
export function generateAnswers(count: number, seed = 42): Corpus {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  // a pool of cited URLs, drawn with a skewed distribution: a few pages get most citations, as in real answers
  const pool: string[] = [];
  for (let i = 0; i < 4000; i++) {
    const host = rnd() < 0.3 ? pick(ENTITY_HOSTS) : pick(THIRD_PARTY);
    pool.push(`https://${host}/${pick(SLUGS)}/${Math.floor(rnd() * 1e6).toString(36)}${rnd() < 0.3 ? '?utm_source=chatgpt.com' : ''}`);
  }
  const cited = () => pool[Math.floor(pool.length * rnd() ** 2.5)];
  const sentence = (n: number) => {
    let s = '';
    for (let i = 0; i < n; i++) s += (i ? ' ' : '') + pick(WORDS);
    return s[0].toUpperCase() + s.slice(1);
  };
  const spell = (e: EntityInput) => {
    const r = rnd();
    const ids = e.identifiers ?? [];
    if (r < 0.15 && ids.length) return pick(ids);
    if (r < 0.2) return e.name.toLowerCase();
    if (r < 0.25 && e.url) return e.url.replace(/^https:\/\/(www\.)?/, '').replace(/\/.*$/, '');
    return e.name;
  };
  const answers: AnswerInput[] = [];
  let chars = 0;
  let citations = 0;
  let withUrls = 0;
  for (let a = 0; a < count; a++) {
    const listed = [...ENTITIES].sort(() => rnd() - 0.5).slice(0, Math.floor(rnd() * 7));
    let text = `${sentence(14)}, ${sentence(10).toLowerCase()}.\n\n`;
    listed.forEach((e, i) => {
      text += `${i + 1}. **${spell(e)}** – ${sentence(12 + Math.floor(rnd() * 8))}.`;
      if (rnd() < 0.3) text += ` ${sentence(6)} than ${spell(pick(ENTITIES))}.`;
      text += '\n';
    });
    let urlsInText = false;
    while (text.length < 540 + rnd() * 200) {
      text += `\n${sentence(10 + Math.floor(rnd() * 10))}`;
      if (rnd() < 0.12) {
        text += ` ([source](${cited()}))`;
        urlsInText = true;
      }
      text += '.';
    }
    const c: string[] = [];
    for (let n = Math.floor(rnd() * 9); n > 0; n--) c.push(cited());
    answers.push({ text, citations: c });
    chars += text.length;
    citations += c.length;
    if (urlsInText) withUrls++;
  }
  // as the projection gets them: parsed from event JSON (flat strings, not the concatenations built here)
  return { answers: JSON.parse(JSON.stringify(answers)), avgChars: chars / count, avgCitations: citations / count, withUrlsInText: withUrls / count };
}

interface Rate {
  /** answers per second of wall-clock time */
  wall: number;
  /** answers per second of this process's CPU time (less sensitive to other load on the machine) */
  cpu: number;
}

function answersPerSecond(run: () => void, perRun: number, seconds: number): Rate {
  run(); // warm-up: JIT and memo tables
  const t0 = nowNs();
  const c0 = process.cpuUsage();
  let done = 0;
  while (secondsSince(t0) < seconds) {
    run();
    done += perRun;
  }
  const wall = secondsSince(t0);
  const c = process.cpuUsage(c0);
  return { wall: done / wall, cpu: done / ((c.user + c.system) / 1e6) };
}

export const analysis: Bench = {
  name: 'analysis',
  about: 'pure answer analysis (mentions, positions, sources) per second, single thread',
  async run({ quick }) {
    const seconds = quick ? 1 : 4;
    const t0 = nowNs();
    const corpus = generateAnswers(5000);
    info(
      `analysis: ${corpus.answers.length} answers, ${corpus.avgChars.toFixed(0)} chars and ${corpus.avgCitations.toFixed(1)} citations on average, ${(100 * corpus.withUrlsInText).toFixed(0)}% with URLs in the text, ${ENTITIES.length} entities (generated in ${secondsSince(t0).toFixed(2)} s)`,
    );

    const compileRuns = quick ? 500 : 2000;
    const tc = nowNs();
    for (let i = 0; i < compileRuns; i++) compileEntities(ENTITIES);
    report('analysis_compile_11_entities_us', (secondsSince(tc) * 1e6) / compileRuns, 'us', { note: 'compileEntities, once per catalogue version' });

    const compiled = compileEntities(ENTITIES);
    let sink = 0;
    const all = () => {
      for (const a of corpus.answers) sink += analyzeAnswer(compiled, a).mentions.length;
    };
    const r = answersPerSecond(all, corpus.answers.length, seconds);
    report('analysis_pure_answers_per_s', r.wall, 'answers/s', {
      cpu: { nodeUs: 1e6 / r.cpu, pgUs: 0, per: 'answer' },
      goal: { op: '>=', value: 100_000 },
      note: `analyzeAnswer, one thread, memo tables warm (citation URLs recur across a history); ${Math.round(r.cpu)} per CPU-second; load average ${loadavg()[0].toFixed(2)} on ${cpus().length} CPUs`,
    });
    const textOnly = corpus.answers.map((a) => ({ text: a.text }));
    const mentionsOnly = () => {
      for (const a of textOnly) sink += analyzeAnswer(compiled, a).mentions.length;
    };
    const rm = answersPerSecond(mentionsOnly, textOnly.length, seconds / 2);
    info(`analysis: text only (no engine citations): ${Math.round(rm.wall)} answers/s, ${Math.round(rm.cpu)} per CPU-second`);
    const cold = () => {
      for (const a of corpus.answers) {
        clearUrlCaches(compiled);
        sink += analyzeAnswer(compiled, a).sources.length;
      }
    };
    const rc = answersPerSecond(cold, corpus.answers.length, seconds / 2);
    info(`analysis: worst case, URL memo tables emptied before every answer: ${Math.round(rc.wall)} answers/s, ${Math.round(rc.cpu)} per CPU-second`);
    if (sink < 0) info(String(sink));
  },
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  analysis.run({ quick: process.argv.includes('--quick') }).catch((err) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}

import { describe, expect, it } from 'vitest';
import { asksToShorten, FRAGMENT, isFragment, reviseWithFragmentRule, SHORTEN_WORDS } from '../../commands/content/revise-content';
import { wordCount } from '../../commands/content/pipeline';
import { createSimulatedEngine } from '../../src/engines/simulated';
import { createWriter, readWriterAnswer, WHOLE_DOCUMENT_DIRECTIVE, type Writer, type WriterTask, writerPrompt } from '../../src/engines/writer';
import { pageText } from '../../src/workers/content';

const subject = {
  title: 'Best CRM for small teams',
  type: 'generated',
  topic_name: 'CRM',
  prompts: ['What is the best CRM for a small team?', 'Which CRM is cheapest?'],
  brand: { name: 'Acme', domain: 'acme.com' },
};
const sim = () => createWriter(createSimulatedEngine({ seed: 1 }), 'claude', () => '2026-11-25');

describe('the writer over the simulated engine', () => {
  it('given the same task twice, then the same document (deterministic)', async () => {
    const a = await sim().write({ task: 'brief', ...subject });
    const b = await createWriter(createSimulatedEngine({ seed: 99 }), 'claude', () => '2030-01-01').write({ task: 'brief', ...subject });
    expect(a.text).toBe(b.text);
    expect(a.text).toContain('# Brief: Best CRM for small teams');
    expect(a.text).toContain('- Which CRM is cheapest?');
    expect(a.credits).toBe(1);
  });

  it('given a brief, then the article follows its outline, under its title, with a meta description', async () => {
    const w = sim();
    const brief = (await w.write({ task: 'brief', ...subject })).text;
    const outline = brief.split('\n').flatMap((l) => /^\d+\. (.+)$/.exec(l)?.[1] ?? []);
    expect(outline.length).toBeGreaterThanOrEqual(4);
    const article = await w.write({ task: 'article', ...subject, brief });
    expect(article.text.startsWith('# Best CRM for small teams')).toBe(true);
    for (const h of outline) expect(article.text).toContain(`## ${h}`);
    expect(article.meta_description.length).toBeGreaterThan(20);
    expect(article.text).not.toContain('Meta description:');
    expect(wordCount(article.text)).toBeGreaterThan(300);
  });

  it('given a live page, then the optimized version keeps its text and answers the questions', async () => {
    const r = await sim().write({
      task: 'optimize',
      ...subject,
      type: 'optimize',
      url: 'https://acme.com/crm',
      page: 'Our CRM is simple. It costs 9 dollars.',
    });
    expect(r.text).toContain('Our CRM is simple. It costs 9 dollars.');
    expect(r.text).toContain('### Which CRM is cheapest?');
  });

  it('given a revision, then the whole document comes back with the instruction worked in; a shortening keeps about half', async () => {
    const w = sim();
    const draft = (await w.write({ task: 'article', ...subject, brief: '1. One\n2. Two\n3. Three' })).text;
    const revised = await w.write({ task: 'revise', draft, instruction: 'Mention the free plan.', whole_document: false });
    expect(revised.text).toContain('revised to mention the free plan');
    expect(wordCount(revised.text)).toBeGreaterThan(wordCount(draft));
    const shorter = await w.write({ task: 'revise', draft, instruction: 'Shorten it a lot', whole_document: false });
    expect(wordCount(shorter.text)).toBeLessThan(wordCount(draft) * 0.7);
  });
});

describe('writer prompts and answers', () => {
  it('fences the material and asks for the whole document on a retry', () => {
    const p = writerPrompt({ task: 'revise', draft: 'D', instruction: 'I', whole_document: true });
    expect(p).toContain('<<<DOCUMENT\nD\nDOCUMENT>>>');
    expect(p).toContain(WHOLE_DOCUMENT_DIRECTIVE);
    expect(writerPrompt({ task: 'revise', draft: 'D', instruction: 'I', whole_document: false })).not.toContain(WHOLE_DOCUMENT_DIRECTIVE);
  });
  it('reads a meta line off an article and unwraps a fenced answer', () => {
    const t: WriterTask = { task: 'article', ...subject, brief: '' };
    expect(readWriterAnswer(t, '```markdown\nMeta description: Short.\n\n# T\n\nBody.\n```')).toEqual({
      text: '# T\n\nBody.',
      meta_description: 'Short.',
    });
    expect(readWriterAnswer(t, '# T\n\nFirst sentence here. Second.').meta_description).toBe('First sentence here.');
  });
  it('reads a live page as text with its headings', () => {
    const { text, title } = pageText(
      '<html><head><title>CRM | Acme</title><style>p{}</style></head><body><nav>menu</nav><h1>Our CRM</h1><p>Simple &amp; cheap.</p><script>x()</script><ul><li>One</li></ul></body></html>',
    );
    expect(title).toBe('CRM | Acme');
    expect(text).toBe('# Our CRM\n\nSimple & cheap.\n\n- One');
  });
});

/** A writer answering revisions from a script, counting what it was asked. */
function scripted(answers: string[]): Writer & { asked: WriterTask[] } {
  const asked: WriterTask[] = [];
  return {
    model: 'claude',
    asked,
    async write(t) {
      asked.push(t);
      return { text: answers[Math.min(asked.length - 1, answers.length - 1)], meta_description: '', credits: 1, model: 'claude' };
    },
  };
}

describe('the revise fragment rule', () => {
  const draft = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');
  const half = Array.from({ length: 49 }, (_, i) => `w${i}`).join(' ');
  const whole = Array.from({ length: 90 }, (_, i) => `w${i}`).join(' ');

  it('given a full revision, then it is taken at once', async () => {
    const w = scripted([whole]);
    expect(await reviseWithFragmentRule(w, draft, 'Make it friendlier')).toEqual({ body: whole, retried: false, credits: 1 });
    expect(w.asked).toHaveLength(1);
  });
  it('given a fragment (under half the words), then the writer is asked once more with the whole-document directive', async () => {
    const w = scripted([half, whole]);
    expect(await reviseWithFragmentRule(w, draft, 'Make it friendlier')).toEqual({ body: whole, retried: true, credits: 2 });
    expect(w.asked.map((t) => t.task === 'revise' && t.whole_document)).toEqual([false, true]);
  });
  it('given a fragment twice, then the rule refuses it (the caller answers 500 and saves nothing)', async () => {
    const w = scripted([half, half]);
    expect(await reviseWithFragmentRule(w, draft, 'Make it friendlier')).toBe(FRAGMENT);
    expect(w.asked).toHaveLength(2);
  });
  it('given an instruction asking to shorten, then a short result is no fragment', async () => {
    for (const word of SHORTEN_WORDS) expect(asksToShorten(`Please ${word} the intro`)).toBe(true);
    expect(asksToShorten('Summarise it')).toBe(true);
    expect(asksToShorten('Add a section on pricing')).toBe(false);
    expect(asksToShorten('Be more cute')).toBe(false);
    const w = scripted([half]);
    expect(await reviseWithFragmentRule(w, draft, 'Condense it')).toEqual({ body: half, retried: false, credits: 1 });
  });
  it('exactly half the words is not a fragment; one fewer is', () => {
    expect(isFragment(draft, Array(50).fill('x').join(' '), 'x')).toBe(false);
    expect(isFragment(draft, Array(49).fill('x').join(' '), 'x')).toBe(true);
  });
});

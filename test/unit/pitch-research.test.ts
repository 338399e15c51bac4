import { describe, expect, it } from 'vitest';
import { compilePitchReport } from '../../commands/pitches/report';
import { nameFromDomain, parsePlanReply, readHomePage, simulatedPlan } from '../../src/workers/pitch-research';

describe('reading a home page', () => {
  it('given og:site_name and a meta description, then they name and describe the company, references decoded', () => {
    const html = `<html><head><title>Home – ignored</title><meta property="og:site_name" content="Acme &amp; Co">
<meta content='Tools for &quot;makers&quot;' name="Description"></head></html>`;
    expect(readHomePage(html, 'acme.com')).toEqual({ company_name: 'Acme & Co', company_description: 'Tools for "makers"' });
  });

  it('given only a title, then its first part is the name; the first paragraph describes', () => {
    const html = '<title>Zentro | Project management</title><body><p>Plan   and <b>ship</b>.</p></body>';
    expect(readHomePage(html, 'zentro.example')).toEqual({ company_name: 'Zentro', company_description: 'Plan and ship .' });
  });

  it('given a page that names nothing, then the domain makes the name; control and bidi characters never pass', () => {
    expect(readHomePage('<html></html>', 'acme-tools.com')).toEqual({ company_name: 'Acme Tools', company_description: '' });
    expect(readHomePage('<title>A\u202Eb\u0007c</title>', 'x.com').company_name).toBe('A b c');
    expect(nameFromDomain('shop.example')).toBe('Shop');
  });
});

describe('the plan an engine writes', () => {
  const prompts = Array.from({ length: 22 }, (_, i) => `Question ${i + 1}?`);
  it('given JSON in a fenced reply, then its competitors and the first 20 prompts', () => {
    const reply = `Sure!\n\`\`\`json\n${JSON.stringify({ competitors: [{ name: 'Globex', url: 'globex.com' }], prompts })}\n\`\`\``;
    const plan = parsePlanReply(reply);
    expect(plan?.competitors).toEqual([{ name: 'Globex', url: 'https://globex.com' }]);
    expect(plan?.prompts).toEqual(prompts.slice(0, 20));
  });

  it('given prose, broken JSON, fewer than 20 prompts or no competitor, then no plan', () => {
    expect(parsePlanReply('Here are some options worth considering.')).toBeNull();
    expect(parsePlanReply('{"competitors": [')).toBeNull();
    expect(parsePlanReply(JSON.stringify({ competitors: [{ name: 'G', url: 'g.com' }], prompts: prompts.slice(0, 19) }))).toBeNull();
    expect(parsePlanReply(JSON.stringify({ competitors: [], prompts }))).toBeNull();
  });

  it('given the simulated engine, then the plan is the same for a domain every time: 5 competitors, 20 distinct prompts', () => {
    const a = simulatedPlan('zentro.example', 'Zentro', 'Zentro is project management software.');
    expect(simulatedPlan('zentro.example', 'Zentro', 'Zentro is project management software.')).toEqual(a);
    expect(a.competitors).toHaveLength(5);
    expect(new Set(a.prompts).size).toBe(20);
    expect(a.prompts.some((p) => p.includes('project management software tools'))).toBe(true);
  });
});

describe('compiling a report', () => {
  it('given answers, then mentions, sentiment, sources and metrics come from the shared analysis, as integers', () => {
    const plan = {
      job_id: 'p',
      competitors: [{ id: 'c1', name: 'Globex', url: 'https://globex.com' }],
      prompts: [{ id: 'q1', prompt: 'Best tool?', type: 'discovery' }],
      attributes: [{ id: 'a1', name: 'Customer support' }],
    };
    const r = compilePitchReport({
      job_id: 'p',
      company_name: 'Zentro',
      company_url: 'https://zentro.example',
      plan,
      answers: [
        {
          model: 'chatgpt',
          answers: [
            {
              prompt_id: 'q1',
              text: 'Zentro is often recommended for its customer support. Globex is fine.',
              citations: ['https://www.g2.com/x', 'https://zentro.example/a'],
            },
            { prompt_id: 'q1', text: 'Globex has poor customer support.', citations: ['https://g2.com/y'] },
            { prompt_id: 'q1', text: 'It depends.', citations: [] },
          ],
        },
      ],
    });
    expect(r.metrics).toEqual({ total_responses: 3, brand_mentions: 1, sentiment_score: 60, response_rate: 33 });
    expect(r.competitors).toEqual([{ id: 'c1', name: 'Globex', url: 'https://globex.com', mentions: 2, sentiment: -60 }]);
    expect(r.sources).toEqual([
      { domain: 'g2.com', mentions: 2 },
      { domain: 'zentro.example', mentions: 1 },
    ]);
    expect(r.attributes.map((a) => [a.attribute_name, a.attribute_type, a.applies_to, a.count])).toEqual([
      ['Customer support', 'negative', 'competitor', 1],
      ['Customer support', 'positive', 'target', 1],
    ]);
    expect(r.sentiment).toEqual({ positive: 1, neutral: 0, negative: 0 });
    expect(r.models).toEqual([{ model: 'chatgpt', answers: 3, brand_mentions: 1 }]);
  });
});

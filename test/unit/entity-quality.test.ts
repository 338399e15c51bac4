import { describe, expect, it } from 'vitest';
import { citedHosts, hostsNaming, judgeSimulated, namesPutForward } from '../../src/analysis/entity-quality';

const names = (text: string) => namesPutForward(text).map((n) => n.name);

describe('names an answer puts forward', () => {
  it('given bold spans and list items, then their names, each once, in the order met (bold first)', () => {
    const text = [
      'For small teams **Zeta** and **zeta** stand out; **pricing matters** too.',
      '1. Gamma - simple and cheap',
      '2. **Delta Labs**: strong reporting',
      '- Omega (by Omega Inc), popular',
      '* Kappa, free tier',
      '10. 37signals – Basecamp maker',
      '  - Lambda — nested item',
    ].join('\n');
    expect(names(text)).toEqual(['Zeta', 'Delta Labs', 'Gamma', 'Omega', 'Kappa', '37signals', 'Lambda']);
  });
  it('given leads that are lower-case, empty or longer than five words, then none of them', () => {
    const text = ['- cheap tools first', '**one two three four five six**', '1. : nothing', '-Nospace item', 'Not a list: **  **'].join('\n');
    expect(names(text)).toEqual([]);
  });
  it('given a list item inside a sentence (no marker at the line start), then only its bold span', () => {
    expect(names('Try these - Alpha and **Beta**.')).toEqual(['Beta']);
  });
});

describe('domains cited beside a name', () => {
  it('given citations and URLs in the text, then the hosts whose first label spells the name', () => {
    const hosts = citedHosts(['https://www.zeta.io/pricing', 'https://blog.zeta.io/x'], 'see https://ze-ta.com and www.other.com');
    expect(hosts.sort()).toEqual(['blog.zeta.io', 'other.com', 'ze-ta.com', 'zeta.io']);
    expect(hostsNaming('Zeta', hosts).sort()).toEqual(['ze-ta.com', 'zeta.io']);
    expect(hostsNaming('Ze Ta!', hosts).sort()).toEqual(['ze-ta.com', 'zeta.io']);
  });
});

describe('the simulated fact judge', () => {
  const facts = [
    { id: 'price', text: 'Acme Pro costs 49 dollars per month.' },
    { id: 'founded', text: 'Acme was founded in 2012 in Berlin.' },
    { id: 'nonumber', text: 'Acme support answers every ticket.' },
  ];
  it('given a sentence naming the brand with two shared long words and another number, then a conflict with that sentence', () => {
    const text = 'Many teams like it. Acme Pro costs 99 dollars per month, billed yearly. Acme was founded in 2012 in Berlin.';
    expect(judgeSimulated(text, ['Acme'], facts)).toEqual([{ fact_id: 'price', excerpt: 'Acme Pro costs 99 dollars per month, billed yearly.' }]);
  });
  it('given a decimal number, then it is one number and the sentence is not cut at its point', () => {
    expect(judgeSimulated('Acme Pro costs 49.5 dollars a month.', ['acme'], facts)).toEqual([
      { fact_id: 'price', excerpt: 'Acme Pro costs 49.5 dollars a month.' },
    ]);
  });
  it('given sentences that do not name the brand, share one long word only, hold only the fact numbers, or a fact without numbers, then none', () => {
    expect(judgeSimulated('Zeta Pro costs 99 dollars per month.', ['Acme'], facts)).toEqual([]);
    expect(judgeSimulated('Acme is at 99 now.', ['Acme'], facts)).toEqual([]);
    expect(judgeSimulated('Acme Pro costs 49 dollars per month.', ['Acme'], facts)).toEqual([]);
    expect(judgeSimulated('Acme support answers every ticket within 2 days.', ['Acme'], facts)).toEqual([]);
    expect(judgeSimulated('Acmeish Pro costs 99 dollars per month.', ['Acme'], facts)).toEqual([]);
  });
});

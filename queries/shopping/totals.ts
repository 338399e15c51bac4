import { num } from './numbers';
import type { DayCards, DayFlags, ShoppingBlocks } from './types';

/** Per day and over the whole selection: answers, cards and answer flags, what the summary, offers and trend read. */
export interface Totals {
  /** every day with answers, in the statement's order, with its answers and answers showing cards */
  days: { day: string; answers: number; answers_with_products: number }[];
  cardDays: Map<string, DayCards>;
  flagDays: Map<string, DayFlags>;
  answers: number;
  answersWithProducts: number;
  /** each card count of DayCards summed over the days */
  cards: Omit<DayCards, 'day' | 'best_own_position'>;
  /** the best (lowest) position of a brand card, or null */
  bestOwnPosition: number | null;
  /** each flag count of DayFlags summed over the days */
  flags: Omit<DayFlags, 'day'>;
}

const CARD_COUNTS = [
  'cards',
  'own_cards',
  'competitor_cards',
  'priced_cards',
  'own_priced_cards',
  'competitor_priced_cards',
  'cards_without_merchant',
  'own_position_sum',
] as const;
const FLAG_COUNTS = ['answers_with_products', 'answers_with_own_products', 'answers_with_competitor_products', 'own_first_position_answers'] as const;

/** Sums field `f` over rows, in their order (so a sum of positions comes out as it always did). */
const sum = <T>(rows: Iterable<T>, f: (r: T) => unknown) => {
  let acc = 0;
  for (const r of rows) acc += num(f(r));
  return acc;
};

export function totals(b: Pick<ShoppingBlocks, 'answer_days' | 'card_days' | 'answer_flags'>): Totals {
  const cardDays = new Map(b.card_days.map((r) => [r.day, r]));
  const flagDays = new Map(b.answer_flags.map((r) => [r.day, r]));
  const days = b.answer_days.map((r) => ({
    day: r.day,
    answers: num(r.answers),
    answers_with_products: num(flagDays.get(r.day)?.answers_with_products),
  }));
  const bests = [...cardDays.values()]
    .map((r) => r.best_own_position)
    .filter((p): p is number => p !== null)
    .map(Number);
  return {
    days,
    cardDays,
    flagDays,
    answers: sum(days, (d) => d.answers),
    answersWithProducts: sum(days, (d) => d.answers_with_products),
    cards: Object.fromEntries(CARD_COUNTS.map((k) => [k, sum(cardDays.values(), (r) => r[k])])) as Totals['cards'],
    bestOwnPosition: bests.length ? Math.min(...bests) : null,
    flags: Object.fromEntries(FLAG_COUNTS.map((k) => [k, sum(flagDays.values(), (r) => r[k])])) as Totals['flags'],
  };
}

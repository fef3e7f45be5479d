/**
 * The API reports revenue and AOV in RON and EUR (docs/api.md). The list's currency is the main figure
 * when it is one of them; any other (USD, …) cannot be shown in its own currency, and the page says so.
 */
export type Reported = 'RON' | 'EUR';

export interface Currencies {
  main: Reported;
  other: Reported;
  /** False when the list's own currency is not one the API reports. */
  reported: boolean;
  listCurrency: string;
}

export function currenciesOf(listCurrency: string): Currencies {
  const main: Reported = listCurrency === 'EUR' ? 'EUR' : 'RON';
  return {
    main,
    other: main === 'RON' ? 'EUR' : 'RON',
    reported: listCurrency === 'RON' || listCurrency === 'EUR',
    listCurrency,
  };
}

export const currencyNote = (c: Currencies): string | undefined =>
  c.reported
    ? undefined
    : `This list's currency is ${c.listCurrency}, which the API does not report: revenue and AOV are shown in RON and EUR, not in ${c.listCurrency}.`;

/**
 * The live view page (ZkLockViewModule) in headless Chromium, for the tests that read it: the
 * browser, and what the page shows, read from its DOM.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Starts headless Chromium; throws saying what to run when it is not installed. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}: run \`bash scripts/ensure-chromium.sh\` (npm test runs it), or set CHROMIUM_PATH.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** What the page shows for one row, read from the DOM. */
export interface ShownRow {
  role: string;
  node: string;
  session: string;
  mode: string;
  owner: string;
  host: string;
  pid: string;
  age: string;
}

/** The little of the DOM these page functions use (the project's TypeScript has no DOM library). */
interface PageElement {
  readonly dataset: Record<string, string | undefined>;
  readonly textContent: string | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
}

/** Every lock section on the page, as text. */
export function shownLocks(page: Page): Promise<{ resource: string; kind: string; rows: ShownRow[] }[]> {
  return page.$$eval('section.lock', (sections: PageElement[]) =>
    sections.map((section) => ({
      resource: section.dataset.resource ?? '',
      kind: section.querySelector('h2 .kind')?.textContent ?? '',
      rows: [...section.querySelectorAll('tbody tr')].map((tr) => {
        const cell = (name: string) => tr.querySelector(`td[data-col="${name}"]`)?.textContent ?? '';
        const data = tr.dataset;
        return {
          role: cell('role'),
          node: data.node ?? '',
          session: data.session ?? '',
          mode: cell('mode'),
          owner: cell('owner'),
          host: cell('host'),
          pid: cell('pid'),
          age: cell('age'),
        };
      }),
    })),
  );
}

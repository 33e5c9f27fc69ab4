// At 800 px (issue 45): on a trace with roofline, memory and findings (the H100 bert trace)
// every tab the page offers fits its cards: no card, header or tab bar is wider than its box
// (`scrollWidth <= clientWidth`; a wide table scrolls inside its own container). The Run and
// Compare tabs need a run or a baseline and are checked by run.spec.js / compare.spec.js.
// Screenshots: e2e/test-results/narrow-<tab>.png.
const { test, expect } = require('../pages/app');
const { realFixture } = require('../support/fixtures');

const H100 = 'tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz';

/** Boxes on the page wider than themselves, described for the failure message. */
function overflowing(page) {
  return page.evaluate(() => [...document.querySelectorAll('.card, .trace-header, header, .tabs')]
    .filter((e) => e.offsetParent !== null && e.scrollWidth > e.clientWidth)
    .map((e) => `${e.className || e.tagName} "${(e.querySelector('h2, summary') || e).textContent.trim().slice(0, 40)}" ${e.scrollWidth} > ${e.clientWidth}`));
}

test('at 800 px every tab fits its cards', async ({ app, page }) => {
  await page.setViewportSize({ width: 800, height: 900 });
  await app.open();
  await app.upload(realFixture(H100));
  await app.waitForTimeline();
  await app.idle();
  const tabs = await page.locator('.tabs button').evaluateAll((els) => els
    .filter((e) => e.offsetParent !== null && !e.disabled)
    .map((e) => e.dataset.testid.replace(/^tab-/, ''))
    .filter((t) => t !== 'run' && t !== 'compare'));
  expect(tabs).toEqual(expect.arrayContaining(['summary', 'findings', 'ops', 'kernels', 'steps', 'charts']));
  for (const tab of tabs) {
    await app.openTab(tab);
    await app.idle();
    expect(await overflowing(page), `the ${tab} tab at 800 px`).toEqual([]);
    await app.screenshot(`narrow-${tab}`);
  }
});

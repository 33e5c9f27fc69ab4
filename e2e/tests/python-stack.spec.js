// A trace recorded with_stack=True (vLLM decode, ~120k python_function events) at 1440 and
// 800 px: the threads' Python frames are a "· Python stack" group of their own that starts
// folded, so a GPU stream's first row is inside the canvas at the default height without
// scrolling; unfolded, the Python rows follow their thread, each labelled with its depth, and
// hovering one names a frame.
// Screenshots: e2e/test-results/python-stack-*.png.
const { test, expect } = require('../pages/app');
const { realFixture } = require('../support/fixtures');

const VLLM = 'tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz';

for (const width of [1440, 800]) {
  test(`at ${width} px: the Python stack starts folded and a GPU stream is in view`, async ({ app, page }) => {
    await page.setViewportSize({ width, height: 900 });
    await app.open();
    await app.upload(realFixture(VLLM));
    await app.waitForTimeline();

    const python = page.getByTestId('group-label').filter({ hasText: 'Python stack' });
    await expect(python.first()).toHaveAttribute('data-collapsed', 'true');
    let t = await app.timeline();
    expect(t.scrollY).toBe(0);
    expect(t.lanes.every((l) => l.first_row === 0), 'no Python rows laid out while folded').toBe(true);
    const streams = t.lanes.filter((l) => l.name.startsWith('stream'));
    expect(streams.length).toBeGreaterThan(0);
    // First row of the first stream, in canvas px from its top.
    const top = t.rulerH + streams[0].y - t.scrollY;
    expect(top + 3 + 18, `${streams[0].name} at ${top} px of ${t.height}`).toBeLessThanOrEqual(t.height);
    await app.screenshot(`python-stack-folded-${width}`);

    await python.first().click();
    await app.idle();
    await expect(python.first()).toHaveAttribute('data-collapsed', 'false');
    t = await app.timeline();
    const frames = t.lanes.filter((l) => l.first_row > 0);
    expect(frames.length).toBeGreaterThan(0);
    const own = t.lanes.find((l) => l.lane === frames[0].lane && l.first_row === 0);
    expect(own, 'the thread keeps its ops entry').toBeTruthy();
    expect(own.rows).toBe(frames[0].first_row);
    expect(frames[0].y).toBeGreaterThan(own.y);
    // Each Python row is labelled with its frame depth, level with the row it names.
    const depths = page.locator(`[data-testid="stack-row-label"][data-lane="${frames[0].lane}"]`);
    await expect(depths).toHaveCount(frames[0].rows);
    const tops = await depths.evaluateAll((els) => els.map((e) => [Number(e.dataset.depth), parseFloat(e.style.top), e.textContent]));
    tops.forEach(([d, top, text], k) => {
      expect(d).toBe(k);
      expect(top).toBe(frames[0].y + 3 + k * 18);
      expect(text).toBe(`depth ${k}`);
    });
    await app.screenshot(`python-stack-unfolded-${width}`);
  });
}

/** `tickwork/testing`: the fake clock and the store conformance suite. */
export { FakeClock } from './fake-clock.js';
export { storeConformance, type StoreConformanceOptions, type ConformanceTestApi, type ConformanceAssertion } from './conformance/index.js';

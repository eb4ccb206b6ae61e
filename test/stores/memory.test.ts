import { MemoryStore } from '../../adapters/memory/index.js';
import { storeConformance } from '../../src/testing/conformance.js';

storeConformance('MemoryStore', { createStore: () => new MemoryStore() });

import type { PutCondition, PutResult, StateBackend } from '../src/index.js'
import type { JsonValue } from '../src/json.js'

/** A real backend behind one that tests extend to watch or hold back its puts. */
export class DelegatingBackend implements StateBackend {
  constructor(protected readonly inner: StateBackend) {}

  get(key: string) {
    return this.inner.get(key)
  }

  put(key: string, value: JsonValue, condition?: PutCondition): Promise<PutResult> {
    return this.inner.put(key, value, condition)
  }

  delete(key: string) {
    return this.inner.delete(key)
  }

  list(prefix: string) {
    return this.inner.list(prefix)
  }

  close() {
    return this.inner.close()
  }
}

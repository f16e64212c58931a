// The order in which vitest starts the test files. Its own order runs the files that took longest
// last time first, and, in a fresh clone with no timings yet, the largest files first. A few small
// files run child processes for half a minute (the `chat-service` command from the packed tarball,
// the examples with BullMQ workers on a real Redis, the Kubernetes Indexed Job recipe, the release
// gate); started last,
// they alone would make the suite ~10 s longer. So they start first, whatever the timings say; the
// rest keeps vitest's order.
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** Files that drive child processes for tens of seconds. */
const CHILD_PROCESS_FILES = [/\/test\/cli\//, /\/test\/examples\//, /\/test\/docs\/indexed-job\.test\.ts$/, /\/test\/release\//]

export default class ChildProcessesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const first = (file: TestSpecification): boolean => CHILD_PROCESS_FILES.some((pattern) => pattern.test(file.moduleId))
    return [...sorted.filter(first), ...sorted.filter((file) => !first(file))]
  }
}

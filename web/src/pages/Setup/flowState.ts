import type { Dispatch } from 'react';
import type { CountryId, PlatformName } from '@hyperdesk/contract';

/** The steps a setup can have; business flows add 'course' between platform and runtime (spec §2). */
export type StepId = 'country' | 'platform' | 'course' | 'runtime' | 'pay';

/** Concurrent students and the course's first and last day (`YYYY-MM-DD`, days of the course's country). */
export interface CourseDetails {
  studentsCount: number;
  startDay: string;
  endDay: string;
}

/** One choice of the runtime step: hours shown, price kept for the summary and the pay button. */
export interface RuntimeOption {
  hours: number;
  price: number;
  /** The catalog pack (individual orders); business orders are priced per hours instead. */
  packId?: string;
}

export interface SetupState {
  steps: readonly StepId[];
  /** How many steps, in order, are confirmed; steps[confirmed] is the open one. */
  confirmed: number;
  country: CountryId | null;
  platform: PlatformName | null;
  course: CourseDetails | null;
  runtime: RuntimeOption | null;
  /** A step was confirmed or reopened: from then on the step that opens takes the keyboard focus. */
  moved: boolean;
}

export type SetupAction =
  | { type: 'country'; value: CountryId | null }
  | { type: 'platform'; value: PlatformName | null }
  | { type: 'course'; value: CourseDetails | null }
  | { type: 'runtime'; value: RuntimeOption | null }
  | { type: 'confirm'; step: StepId }
  | { type: 'change'; step: StepId };

export function initialSetup(steps: readonly StepId[]): SetupState {
  return { steps, confirmed: 0, country: null, platform: null, course: null, runtime: null, moved: false };
}

/**
 * Steps are confirmed in order. Reopening a step ('change') un-confirms it and every later step; picking a
 * different country, platform or course clears the runtime choice and with it the amount (spec §4).
 */
export function setupReducer(s: SetupState, a: SetupAction): SetupState {
  switch (a.type) {
    case 'country':
    case 'platform':
    case 'course': {
      if (s[a.type] === a.value) return s;
      const at = s.steps.indexOf(a.type);
      return { ...s, [a.type]: a.value, runtime: null, confirmed: Math.min(s.confirmed, at) };
    }
    case 'runtime':
      return { ...s, runtime: a.value, confirmed: Math.min(s.confirmed, s.steps.indexOf('runtime')) };
    case 'confirm': {
      const at = s.steps.indexOf(a.step);
      return at === s.confirmed ? { ...s, confirmed: at + 1, moved: true } : s;
    }
    case 'change': {
      const at = s.steps.indexOf(a.step);
      return at >= 0 && at < s.confirmed ? { ...s, confirmed: at, moved: true } : s;
    }
  }
}

export function isConfirmed(s: SetupState, step: StepId): boolean {
  const at = s.steps.indexOf(step);
  return at >= 0 && at < s.confirmed;
}

/** The total to pay, set once the runtime is confirmed (spec §4: the amount resets with earlier changes). */
export function amountOf(s: SetupState): number | null {
  return isConfirmed(s, 'runtime') && s.runtime ? s.runtime.price : null;
}

/** What every step component of the setup page gets. */
export interface StepProps {
  state: SetupState;
  dispatch: Dispatch<SetupAction>;
  number: number;
}

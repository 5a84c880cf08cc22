import { useState } from 'react';
import { MAX_STUDENTS, MIN_STUDENTS } from '@hyperdesk/contract';
import { formatDateRange } from '../../lib/format';
import type { StepProps } from './flowState';
import { isConfirmed } from './flowState';
import { addDays, courseSummary, todayIn, validateCourse, type CourseErrors, type CourseInput } from './courseDates';
import { FieldError, Step } from './Step';
import setup from './Setup.module.css';
import styles from './CourseStep.module.css';

function summaryDates(course: Parameters<typeof courseSummary>[0], country: string): string {
  const { startDate, endDate } = courseSummary(course, country);
  return formatDateRange(startDate, endDate, country);
}

/** Business step 'Set your Course Details' (spec §2, §5): concurrent students and the course's date range. */
export function CourseStep({ state, dispatch, number }: StepProps) {
  const done = isConfirmed(state, 'course');
  const open = state.steps[state.confirmed] === 'course';
  const [input, setInput] = useState<CourseInput>(() => ({
    students: state.course ? String(state.course.studentsCount) : '',
    start: state.course?.startDay ?? '',
    end: state.course?.endDay ?? '',
  }));
  const [errors, setErrors] = useState<CourseErrors>({});
  // The days are the course's country's (its time zone), not the browser's; the country step comes first.
  const country = state.country ?? 'UK';
  const today = todayIn(country);

  const edit = (field: keyof CourseInput, value: string) => {
    setInput((i) => ({ ...i, [field]: value }));
    setErrors((e) => ({ ...e, [field]: undefined }));
  };

  const confirm = () => {
    const { errors: found, value } = validateCourse(input, country);
    setErrors(found);
    if (!value) return;
    const same =
      state.course &&
      state.course.studentsCount === value.studentsCount &&
      state.course.startDay === value.startDay &&
      state.course.endDay === value.endDay;
    // New details clear the runtime choice (its prices depend on them); the same ones keep it (spec §4).
    if (!same) dispatch({ type: 'course', value });
    dispatch({ type: 'confirm', step: 'course' });
  };

  const field = (name: keyof CourseInput) => ({
    'aria-invalid': errors[name] ? true : undefined,
    'aria-describedby': errors[name] ? `setup-${name}-error` : undefined,
  });
  // Dates compare as YYYY-MM-DD strings; the end date's picker starts at the chosen start date.
  const endMin = input.start && input.start >= today ? input.start : today;

  return (
    <Step
      focusOnOpen={state.moved}
      number={number}
      title="Set your Course Details"
      status={done ? 'done' : open ? 'open' : 'locked'}
      summary={
        state.course ? (
          <span className={styles.summary}>
            <span>
              {state.course.studentsCount} concurrent {state.course.studentsCount === 1 ? 'student' : 'students'}
            </span>
            <span>{summaryDates(state.course, country)}</span>
          </span>
        ) : null
      }
      onChange={() => dispatch({ type: 'change', step: 'course' })}
    >
      <div className={styles.grid}>
        <div className={styles.field}>
          <label className={setup.label} htmlFor="setup-students">
            Concurrent Students
          </label>
          <input
            id="setup-students"
            className={`${styles.input} ${styles.number}`}
            type="number"
            inputMode="numeric"
            min={MIN_STUDENTS}
            max={MAX_STUDENTS}
            step={1}
            value={input.students}
            onChange={(e) => edit('students', e.target.value)}
            {...field('students')}
          />
          <p className={styles.hint}>
            How many students use the machines at the same time ({MIN_STUDENTS}–{MAX_STUDENTS}).
          </p>
          {errors.students ? <FieldError id="setup-students-error">{errors.students}</FieldError> : null}
        </div>
        <fieldset className={styles.range}>
          <legend className={setup.label}>Course Dates</legend>
          <div className={styles.dates}>
            <div className={styles.field}>
              <label className={styles.dateLabel} htmlFor="setup-start">
                Start Date
              </label>
              <input
                id="setup-start"
                className={styles.input}
                type="date"
                min={today}
                max={addDays(today, 365)}
                value={input.start}
                onChange={(e) => edit('start', e.target.value)}
                {...field('start')}
              />
              {errors.start ? <FieldError id="setup-start-error">{errors.start}</FieldError> : null}
            </div>
            <span className={styles.dash} aria-hidden="true">
              –
            </span>
            <div className={styles.field}>
              <label className={styles.dateLabel} htmlFor="setup-end">
                End Date
              </label>
              <input
                id="setup-end"
                className={styles.input}
                type="date"
                min={endMin}
                value={input.end}
                onChange={(e) => edit('end', e.target.value)}
                {...field('end')}
              />
              {errors.end ? <FieldError id="setup-end-error">{errors.end}</FieldError> : null}
            </div>
          </div>
          <p className={styles.hint}>Machines can be started from the start date; unused hours expire at the end of the end date.</p>
        </fieldset>
      </div>
      <div className={setup.actions}>
        <button type="button" className={setup.primary} onClick={confirm}>
          Confirm Details
        </button>
      </div>
    </Step>
  );
}

import { describe, expect, it } from 'vitest';
import {
  commonPasswords,
  MINIMUM_PASSWORD_LENGTH,
  passwordProblem,
} from '../src/account/common-passwords.js';

describe('common passwords', () => {
  it('holds at least 10,000 entries, all lower-case', async () => {
    const list = await commonPasswords();
    expect(list.size).toBeGreaterThanOrEqual(10_000);
    expect([...list].every((entry) => entry === entry.toLowerCase())).toBe(true);
  });

  it('loads once: every call answers the same set', async () => {
    expect(await commonPasswords()).toBe(await commonPasswords());
  });

  it.each([
    'password1',
    'qwerty123',
    'iloveyou',
    '1234567890',
    'qwertyuiop',
    'password123',
    'football123',
    'letmein123',
    '1q2w3e4r5t',
  ])('lists %s', async (password) => {
    expect((await commonPasswords()).has(password)).toBe(true);
  });

  it.each([
    'password123',
    'PASSWORD123',
    'Qwertyuiop',
    '1234567890',
    'iloveyou123',
    'Football123',
    'correcthorsebatterystaple',
  ])('refuses %s as too common (case-insensitively)', async (password) => {
    expect(await passwordProblem(password, 'alice')).toMatch(/too common/);
  });

  it('refuses the username as the password, in any case', async () => {
    expect(await passwordProblem('Alice-Example', 'alice-example')).toMatch(/too common/);
  });

  it('keeps the minimum length rule, common or not', async () => {
    expect(MINIMUM_PASSWORD_LENGTH).toBe(10);
    expect(await passwordProblem('password1', 'alice')).toMatch(/at least 10 characters/);
    expect(await passwordProblem('x7#Kq!zp2', 'alice')).toMatch(/at least 10 characters/);
  });

  it('accepts a long, uncommon password', async () => {
    expect(await passwordProblem('violet-tractor-umbrella-42', 'alice')).toBeNull();
    expect(await passwordProblem('a-much-better-passphrase', 'alice')).toBeNull();
  });
});

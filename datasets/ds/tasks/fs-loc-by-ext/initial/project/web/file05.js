export function run() {
export function run() {
}
}
const value = 38;
const value = 38;



  return value;

export function run() {
  return value;
export function run() {
}
export function run() {
}
export function run() {
export function run() {
const value = 33;
const value = 4;

export function run() {
  return value;
  return value;
const value = 69;
  return value;
export function run() {
  return value;
const value = 94;
export function run() {
export function run() {
}
  return value;
export function run() {
}
const value = 53;
export function run() {
const value = 46;
const value = 33;
export function run() {
const value = 32;

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockedCategory, embeddedIPv4 } from '../../src/net/address-policy.ts';

void test('refuses every non-public range when private hosts are not allowed', () => {
  const cases: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['3fff:fff:ffff::1', 'reserved'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:c0a8:101::1', 'private'],
    ['4000::1', 'reserved'],
    ['not-an-ip', 'reserved'],
  ];
  for (const [address, category] of cases) {
    assert.equal(blockedCategory(address, false), category, address);
  }
});

void test('lets public addresses through', () => {
  for (const address of [
    '93.184.215.14',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    // Just past the documentation range 3fff::/20.
    '3fff:1000::1',
  ]) {
    assert.equal(blockedCategory(address, false), undefined, address);
  }
});

void test('allowPrivateHosts opens loopback, private ranges and 0.0.0.0, never metadata, multicast or reserved', () => {
  for (const address of [
    '127.0.0.1',
    '10.0.0.1',
    '192.168.0.10',
    '::1',
    'fd12::1',
    '169.254.10.1',
    '100.64.1.1',
  ]) {
    assert.equal(blockedCategory(address, true), undefined, address);
  }
  // 0.0.0.0 and :: reach this host, as loopback does; the rest of 0.0.0.0/8 stays refused.
  assert.equal(blockedCategory('0.0.0.0', true), undefined);
  assert.equal(blockedCategory('::', true), undefined);
  assert.equal(blockedCategory('0.0.0.0', false), 'unspecified');
  assert.equal(blockedCategory('0.1.2.3', true), 'unspecified');
  assert.equal(blockedCategory('169.254.169.254', true), 'cloud metadata');
  assert.equal(blockedCategory('224.0.0.1', true), 'multicast');
  assert.equal(blockedCategory('240.0.0.1', true), 'reserved');
});

void test('finds the IPv4 host behind mapped, compatible, NAT64 and 6to4 addresses', () => {
  assert.equal(embeddedIPv4('::ffff:192.168.0.1'), '192.168.0.1');
  assert.equal(embeddedIPv4('::ffff:c0a8:1'), '192.168.0.1');
  assert.equal(embeddedIPv4('64:ff9b::808:808'), '8.8.8.8');
  assert.equal(embeddedIPv4('2002:0a00:0001::5'), '10.0.0.1');
  assert.equal(embeddedIPv4('2606:4700::1111'), undefined);
  assert.equal(embeddedIPv4('::1'), undefined);
});

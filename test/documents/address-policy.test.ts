import t from 'tap';
import {
  classifyAddress,
  createAddressPolicy,
  isPublicAddress,
  parseAllowedHost,
  parseIpv6,
} from '../../src/documents/address-policy.ts';

const strict = createAddressPolicy({ allowPrivateNetworks: false, allowedHosts: [] });

t.test('every denied IPv4 range is denied, with its category', async (t) => {
  const cases: Array<[string, string]> = [
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.254', 'shared'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['192.0.0.170', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
  ];
  for (const [ip, category] of cases) {
    t.equal(classifyAddress(ip).category, category, ip);
    const denial = strict.addressDenial(ip);
    t.ok(denial, `${ip} denied`);
    t.match(denial, ip, 'the reason names the address');
  }
});

t.test('edges of the ranges stay public', async (t) => {
  for (const ip of ['9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0', '169.253.255.255', '223.255.255.255', '1.1.1.1', '8.8.8.8', '93.184.216.34']) {
    t.equal(classifyAddress(ip).category, 'public', ip);
    t.equal(strict.addressDenial(ip), null, `${ip} allowed`);
  }
});

t.test('IPv6 forms', async (t) => {
  const cases: Array<[string, string]> = [
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'reserved'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'reserved'],
    // IPv4-mapped, dotted and hex (the hex form is what URL parsing produces).
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
    ['::ffff:0:10.0.0.1', 'private'],
    // IPv4-compatible (deprecated) and NAT64.
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b:1::1', 'reserved'],
    // 6to4 embedding 192.168.1.1, Teredo with client 127.0.0.1 (stored inverted).
    ['2002:c0a8:0101::1', 'private'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
  ];
  for (const [ip, category] of cases) {
    t.equal(classifyAddress(ip).category, category, ip);
    t.ok(strict.addressDenial(ip), `${ip} denied`);
  }
  t.equal(classifyAddress('::ffff:a9fe:a9fe').embeddedIpv4, '169.254.169.254');
  t.match(strict.addressDenial('::ffff:7f00:1'), /IPv4-mapped/);
});

t.test('public IPv6 and embedded public IPv4 are allowed', async (t) => {
  for (const ip of ['2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:0808:0808::1']) {
    t.ok(isPublicAddress(ip), ip);
    t.equal(strict.addressDenial(ip), null, ip);
  }
});

t.test('IPv6 parser', async (t) => {
  t.same(parseIpv6('::1'), [0, 0, 0, 0, 0, 0, 0, 1]);
  t.same(parseIpv6('1:2:3:4:5:6:7:8'), [1, 2, 3, 4, 5, 6, 7, 8]);
  t.same(parseIpv6('::ffff:1.2.3.4'), [0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
  t.same(parseIpv6('fe80::'), [0xfe80, 0, 0, 0, 0, 0, 0, 0]);
  t.equal(parseIpv6('1::2::3'), null);
  t.equal(parseIpv6('12345::'), null);
  t.equal(parseIpv6('not-an-ip'), null);
});

t.test('garbage is invalid and denied', async (t) => {
  t.equal(classifyAddress('example.com').category, 'invalid');
  t.ok(strict.addressDenial('example.com'));
  t.ok(strict.addressDenial('256.1.1.1'));
});

t.test('ALLOW_PRIVATE_NETWORKS allows every valid address', async (t) => {
  const open = createAddressPolicy({ allowPrivateNetworks: true, allowedHosts: [] });
  for (const ip of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '::1', 'fd00::1', '8.8.8.8']) t.equal(open.addressDenial(ip), null, ip);
  t.ok(open.addressDenial('nope'));
});

t.test('ALLOWED_HOSTS entries', async (t) => {
  t.same(parseAllowedHost('LocalHost:8080'), { host: 'localhost', port: 8080 });
  t.same(parseAllowedHost('files.internal'), { host: 'files.internal' });
  t.same(parseAllowedHost('[::1]:9000'), { host: '::1', port: 9000 });
  t.same(parseAllowedHost('0:0::1'), { host: '::1' });
  t.equal(parseAllowedHost('host:99999'), null);
  t.equal(parseAllowedHost(''), null);

  const p = createAddressPolicy({ allowPrivateNetworks: false, allowedHosts: ['localhost:8080', 'files.internal', '[::1]:9000'] });
  t.ok(p.hostAllowed('localhost', 8080));
  t.notOk(p.hostAllowed('localhost', 8081), 'port must match when given');
  t.ok(p.hostAllowed('FILES.internal.', 443), 'no port: any port; case and trailing dot ignored');
  t.ok(p.hostAllowed('[::1]', 9000));
  t.notOk(p.hostAllowed('127.0.0.1', 8080), 'an allowed name does not allow its address');
  t.ok(p.addressDenial('127.0.0.1'), 'the address rule itself is unchanged');
});

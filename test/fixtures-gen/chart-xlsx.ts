/**
 * A workbook with charts, for the spreadsheet chart tests. exceljs writes no charts, so the chart
 * parts are added to its package by hand: a bar chart embedded in the "Data" worksheet (through
 * a drawing) and a chart sheet "Cost chart" holding a line chart, each chart carrying the cached
 * series names, categories and values that Excel stores next to the formulas.
 */
import ExcelJS from 'exceljs';
import JSZip from 'jszip';

export const CHART_FACTS = {
  months: ['Jan', 'Feb', 'Mar', 'Apr'],
  revenue: [120, 135.5, 150, 171],
  cost: [80, 82, 90, 95],
  barTitle: 'Revenue by month',
  lineTitle: 'Cost trend',
  chartSheet: 'Cost chart',
} as const;

const C = 'http://schemas.openxmlformats.org/drawingml/2006/chart';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XDR = 'http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing';

const strCache = (values: readonly string[]) =>
  `<c:strCache><c:ptCount val="${values.length}"/>${values.map((v, i) => `<c:pt idx="${i}"><c:v>${v}</c:v></c:pt>`).join('')}</c:strCache>`;
const numCache = (values: readonly number[]) =>
  `<c:numCache><c:formatCode>General</c:formatCode><c:ptCount val="${values.length}"/>${values.map((v, i) => `<c:pt idx="${i}"><c:v>${v}</c:v></c:pt>`).join('')}</c:numCache>`;

function chartXml(kind: 'bar' | 'line', title: string, series: string, column: string, values: readonly number[]): string {
  const ser =
    `<c:ser><c:idx val="0"/><c:order val="0"/><c:tx><c:strRef><c:f>Data!$${column}$1</c:f>${strCache([series])}</c:strRef></c:tx>` +
    `<c:cat><c:strRef><c:f>Data!$A$2:$A$5</c:f>${strCache(CHART_FACTS.months)}</c:strRef></c:cat>` +
    `<c:val><c:numRef><c:f>Data!$${column}$2:$${column}$5</c:f>${numCache(values)}</c:numRef></c:val></c:ser>`;
  const plot = kind === 'bar' ? `<c:barChart><c:barDir val="col"/><c:grouping val="clustered"/>${ser}</c:barChart>` : `<c:lineChart><c:grouping val="standard"/>${ser}</c:lineChart>`;
  return (
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><c:chartSpace xmlns:c="${C}" xmlns:a="${A}" xmlns:r="${R}"><c:chart>` +
    `<c:title><c:tx><c:rich><a:bodyPr/><a:p><a:r><a:t>${title}</a:t></a:r></a:p></c:rich></c:tx></c:title>` +
    `<c:plotArea><c:layout/>${plot}</c:plotArea></c:chart></c:chartSpace>`
  );
}

const drawingXml = (anchor: 'twoCellAnchor' | 'absoluteAnchor') =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><xdr:wsDr xmlns:xdr="${XDR}" xmlns:a="${A}"><xdr:${anchor}>` +
  (anchor === 'twoCellAnchor'
    ? '<xdr:from><xdr:col>4</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>1</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>10</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>15</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to>'
    : '<xdr:pos x="0" y="0"/><xdr:ext cx="8000000" cy="6000000"/>') +
  `<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="2" name="Chart 1"/><xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr>` +
  `<xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/></xdr:xfrm><a:graphic><a:graphicData uri="${C}"><c:chart xmlns:c="${C}" xmlns:r="${R}" r:id="rId1"/></a:graphicData></a:graphic>` +
  `</xdr:graphicFrame><xdr:clientData/></xdr:${anchor}></xdr:wsDr>`;

const rels = (items: Array<[string, string, string]>) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
  items.map(([id, type, target]) => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}"/>`).join('') +
  '</Relationships>';

export async function buildChartXlsx(): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const data = wb.addWorksheet('Data');
  data.addRow(['Month', 'Revenue', 'Cost']);
  CHART_FACTS.months.forEach((m, i) => data.addRow([m, CHART_FACTS.revenue[i], CHART_FACTS.cost[i]]));
  const zip = await JSZip.loadAsync(Buffer.from(await wb.xlsx.writeBuffer()));

  zip.file('xl/charts/chart1.xml', chartXml('bar', CHART_FACTS.barTitle, 'Revenue', 'B', CHART_FACTS.revenue));
  zip.file('xl/charts/chart2.xml', chartXml('line', CHART_FACTS.lineTitle, 'Cost', 'C', CHART_FACTS.cost));
  zip.file('xl/drawings/drawing1.xml', drawingXml('twoCellAnchor'));
  zip.file('xl/drawings/_rels/drawing1.xml.rels', rels([['rId1', 'chart', '../charts/chart1.xml']]));
  zip.file('xl/drawings/drawing2.xml', drawingXml('absoluteAnchor'));
  zip.file('xl/drawings/_rels/drawing2.xml.rels', rels([['rId1', 'chart', '../charts/chart2.xml']]));

  // The worksheet points at its drawing.
  const sheet = (await zip.file('xl/worksheets/sheet1.xml')!.async('string')).replace('</worksheet>', '<drawing r:id="rIdDrawing1"/></worksheet>');
  zip.file('xl/worksheets/sheet1.xml', sheet.includes('xmlns:r=') ? sheet : sheet.replace('<worksheet ', `<worksheet xmlns:r="${R}" `));
  const sheetRels = zip.file('xl/worksheets/_rels/sheet1.xml.rels');
  const drawingRel = `<Relationship Id="rIdDrawing1" Type="${REL}/drawing" Target="../drawings/drawing1.xml"/>`;
  zip.file(
    'xl/worksheets/_rels/sheet1.xml.rels',
    sheetRels ? (await sheetRels.async('string')).replace('</Relationships>', `${drawingRel}</Relationships>`) : rels([['rIdDrawing1', 'drawing', '../drawings/drawing1.xml']]),
  );

  // The chart sheet: a sheet of the workbook that is one drawing.
  zip.file(
    'xl/chartsheets/sheet1.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><chartsheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${R}"><sheetPr/><sheetViews><sheetView workbookViewId="0"/></sheetViews><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/><drawing r:id="rId1"/></chartsheet>`,
  );
  zip.file('xl/chartsheets/_rels/sheet1.xml.rels', rels([['rId1', 'drawing', '../drawings/drawing2.xml']]));
  const workbook = (await zip.file('xl/workbook.xml')!.async('string')).replace(
    '</sheets>',
    `<sheet name="${CHART_FACTS.chartSheet}" sheetId="99" r:id="rIdChartSheet1"/></sheets>`,
  );
  zip.file('xl/workbook.xml', workbook);
  const wbRels = (await zip.file('xl/_rels/workbook.xml.rels')!.async('string')).replace(
    '</Relationships>',
    `<Relationship Id="rIdChartSheet1" Type="${REL}/chartsheet" Target="chartsheets/sheet1.xml"/></Relationships>`,
  );
  zip.file('xl/_rels/workbook.xml.rels', wbRels);
  const types = (await zip.file('[Content_Types].xml')!.async('string')).replace(
    '</Types>',
    '<Override PartName="/xl/chartsheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.chartsheet+xml"/>' +
      '<Override PartName="/xl/drawings/drawing1.xml" ContentType="application/vnd.openxmlformats-officedocument.drawing+xml"/>' +
      '<Override PartName="/xl/drawings/drawing2.xml" ContentType="application/vnd.openxmlformats-officedocument.drawing+xml"/>' +
      '<Override PartName="/xl/charts/chart1.xml" ContentType="application/vnd.openxmlformats-officedocument.drawingml.chart+xml"/>' +
      '<Override PartName="/xl/charts/chart2.xml" ContentType="application/vnd.openxmlformats-officedocument.drawingml.chart+xml"/></Types>',
  );
  zip.file('[Content_Types].xml', types);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

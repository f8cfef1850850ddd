-- Files with the most rejected lines, by reason code (split_part also reads workspaces whose reason was 'code: detail').
SELECT source_file, split_part(reason, ':', 1) AS reason, count(*) AS lines
FROM rejects
GROUP BY ALL
ORDER BY lines DESC, source_file, reason
LIMIT 50
